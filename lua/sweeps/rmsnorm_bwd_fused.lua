-- rmsnorm_bwd_fused.lua -- the backward's fused family (one launch: the
-- persistent rows, a grid barrier and dw's column sum) against the
-- persistent chain it was made from, at the shapes where the chain's second
-- kernel costs most: few rows (M = 256 .. 4096).  Not part of `make tune`;
-- run it on a GPU to see where one launch wins:
--
--   normtune run lua/sweeps/rmsnorm_bwd_fused.lua --db probe.db
--   normtune query --db probe.db shape 1024 4096
--
-- bf16 only.  Both families take the same parameters over the same space
-- (stages 2 .. 4: the fused kernel always pipelines), so each shape
-- compares the two kernels config by config.

local function fits(p, s)
  local cols = p.block * p.chunks * 8
  return cols >= s.N and cols - s.N < p.block * 8 and p.block * 8 <= s.N
    and (p.k == 0 or p.k * p.block <= 1024)
end

local params = {block = {128, 256, 512, 1024}, chunks = normtune.range(1, 8),
                stages = {2, 3}, k = {0, 1, 2}}

return normtune.sweep {
  op = "rmsnorm_bwd",
  dtype = "bf16",
  shapes = normtune.grid({1024, 2048, 4096, 8192, 16384}, {256, 1024, 2048, 4096}),
  families = {
    persistent = {params = params, where = fits},
    fused = {params = params, where = fits},
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
