-- stages.lua -- the backward's pipelines deeper than the default sweep's:
-- persistent with 5, 6 and 8 rows in flight a block beside 2 to 4, at few
-- rows (M = 256 .. 4096 by N = 1024 .. 8192), and wstage with 5 to 8
-- steps beside 2 to 4 at short rows; bf16, every point measured.
local SMEM_BUDGET = 200 * 1024
local SMEM_PER_SM = 228 * 1024
local SMEM_BLOCK_MAX = 226 * 1024
local THREADS_PER_SM = 2048
local E = 8
local function persist_ok(p, s)
  local cols = p.block * p.chunks * E
  if cols < s.N or cols - s.N >= p.block * E then return false end
  if p.block * E > s.N then return false end
  if p.chunks * E > 64 then return false end
  local bytes = (32 * p.stages + E * 2) * p.block * p.chunks
  if bytes > SMEM_BUDGET then return false end
  if p.k > 0 and p.k * (bytes + 512) > SMEM_PER_SM then return false end
  return p.k * p.block <= THREADS_PER_SM
end
local few = normtune.grid({1024, 2048, 4096, 8192}, {256, 1024, 2048, 4096})
local short = {{M = 8192, N = 768}, {M = 32768, N = 512}, {M = 65536, N = 768}, {M = 8192, N = 512}}
return normtune.sweep {
  op = "rmsnorm_bwd",
  dtypes = {"bf16"},
  shapes = normtune.join(few, short),
  families = {
    persistent = {
      params = {block = {64, 128, 256, 512, 1024}, chunks = normtune.range(1, 16),
                stages = {2, 3, 4, 5, 6, 8}, k = {0, 1, 2, 4}},
      where = function(p, s) return s.N >= 1024 and persist_ok(p, s) end,
    },
    wstage = {
      params = {tpr = {16, 32}, block = {128, 256, 512}, chunks = normtune.range(1, 4),
                stages = {2, 3, 4, 5, 6, 8}, k = {0, 2, 4}},
      where = function(p, s)
        local cols = p.tpr * p.chunks * E
        local ring = 32 * p.stages * p.block * p.chunks + p.tpr * p.chunks * E * 2
        return s.N < 1024 and cols >= s.N and cols - s.N < p.tpr * E and
               ring <= SMEM_BLOCK_MAX and (p.k == 0 or p.k * (ring + 1024) <= SMEM_PER_SM)
      end,
    },
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
