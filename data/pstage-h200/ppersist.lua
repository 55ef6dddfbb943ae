-- ppersist.lua -- rmsnorm_bwd.ppersist (persistent's pipelined walk with
-- the rows `pf` steps past the pipeline prefetched into L2) beside
-- persistent's pipelined configs, bf16, at the rows past 16384 where
-- persistent is the shipped pick (18432, 20480), and at
-- two mid shapes (4096 x 4096, 2048 x 8192).  pf = 0 is
-- persistent's walk compiled from ppersist.cuh: the control.
local SMEM_BUDGET = 200 * 1024
local SMEM_PER_SM = 228 * 1024
local E = 8
local function snug(p, s)
  local cols = p.block * p.chunks * E
  return cols >= s.N and cols - s.N < p.block * E
end
local function fits(p)
  local bytes = (32 * p.stages + 2 * E) * p.block * p.chunks
  return bytes <= SMEM_BUDGET and (p.k == 0 or p.k * (bytes + 1024) <= SMEM_PER_SM) and
         (p.k == 0 or p.k * p.block <= 2048)
end
return normtune.sweep {
  op = "rmsnorm_bwd",
  dtypes = {"bf16"},
  shapes = {{M = 16384, N = 18432}, {M = 4096, N = 20480},
            {M = 4096, N = 4096}, {M = 2048, N = 8192}},
  families = {
    persistent = {
      params = {block = {128, 256, 512, 1024}, chunks = normtune.range(1, 16), stages = {2, 3, 4},
                k = {0, 1, 2, 4}},
      where = function(p, s) return snug(p, s) and fits(p) end,
    },
    ppersist = {
      params = {block = {128, 256, 512, 1024}, chunks = normtune.range(1, 16), stages = {2, 3, 4},
                k = {0, 1, 2, 4}, pf = {0, 1, 2, 4}},
      where = function(p, s) return snug(p, s) and fits(p) end,
    },
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
