-- rmsnorm_bwd_cluster.lua -- the backward's cluster family (each row split
-- over the blocks of a thread block cluster, sm_90 and newer) against the
-- persistent family, at the shapes it was made for: few rows (M = 256 ..
-- 1024 cannot fill the SMs with one block per row) and long rows.  Not part
-- of `make tune`; run it on a GPU to see where the cluster family wins:
--
--   normtune run lua/sweeps/rmsnorm_bwd_cluster.lua --db probe.db
--   normtune query --db probe.db shape 16384 256
--
-- `make test-compile` (tests/compile_all.sh) compiles every variant of it
-- for sm_90a.  bf16 only: 9 problems.

-- x is bf16: 8 elements per 16-byte chunk.  A config fits when its threads
-- per row (T) cover N with less than one chunk per thread to spare and
-- every thread has a chunk; a k with k * block <= 256 builds k = 0's code
-- (registers are capped at 255 either way), so it is left out.
local function fits(T, p, s)
  local cols = T * p.chunks * 8
  return cols >= s.N and cols - s.N < T * 8 and T * 8 <= s.N and
         (p.k == 0 or p.k * p.block > 256)
end

return normtune.sweep {
  op = "rmsnorm_bwd",
  dtype = "bf16",
  shapes = normtune.grid({4096, 8192, 16384}, {256, 1024, 4096}),
  families = {
    persistent = {
      params = {block = {128, 256, 512, 1024}, chunks = normtune.range(1, 16),
                stages = {1, 2}, k = {0, 1, 2}},
      where = function(p, s) return fits(p.block, p, s) end,
    },
    cluster = {
      params = {cluster = {2, 4, 8}, block = {64, 128, 256, 512, 1024},
                chunks = normtune.range(1, 16),
                k = {0, 1, 2, 4}},
      where = function(p, s) return fits(p.cluster * p.block, p, s) end,
    },
  },
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
