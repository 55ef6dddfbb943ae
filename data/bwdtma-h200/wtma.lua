-- wtma.lua -- rmsnorm_bwd.wtma (wstage's short rows with each step's rows
-- brought into the ring by two bulk copies of a producer warp) beside
-- wstage, every config of both that the default sweep's rules for wstage
-- keep, bf16, at the five short rows of `make bench` ("Norms per head":
-- N = 64 .. 768); warp's results at these shapes are in data/results.db.
local SMEM_PER_SM = 228 * 1024
local SMEM_BLOCK_MAX = 226 * 1024
local E = 8
local function covers(p, s)
  local cols = p.tpr * p.chunks * E
  return cols >= s.N and cols - s.N < p.tpr * E
end
-- the ring of stages steps (x and dy: 32 bytes a chunk of each thread) and w
local function ring_fits(p, s)
  local ring = 32 * p.stages * p.block * p.chunks + p.tpr * p.chunks * E * 2
  return ring <= SMEM_BLOCK_MAX and (p.k == 0 or p.k * (ring + 1024) <= SMEM_PER_SM)
end
local staged = {tpr = {4, 8, 16, 32}, block = {128, 256, 512}, chunks = normtune.range(1, 4),
                stages = {2, 3, 4}, k = {0, 2, 4}}
return normtune.sweep {
  op = "rmsnorm_bwd",
  dtypes = {"bf16"},
  shapes = {{M = 1048576, N = 128}, {M = 131072, N = 64}, {M = 65536, N = 256},
            {M = 32768, N = 512}, {M = 8192, N = 768}},
  families = {
    wstage = {params = staged, where = function(p, s) return covers(p, s) and ring_fits(p, s) end},
    wtma = {params = staged, where = function(p, s) return covers(p, s) and ring_fits(p, s) end},
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
