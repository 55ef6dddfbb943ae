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
-- for sm_90a.  bf16 only: 21 problems (9 of N = 4096 .. 16384 by M = 256
-- .. 4096, 12 past 16384 by M = 1024 .. 16384, where the default sweep has
-- the loop family), 729 variants the families run (108 persistent, 621
-- cluster): the cluster family refuses chunks that would spill registers.

-- x is bf16: 8 elements per 16-byte chunk.  A config fits when its threads
-- per row (T) cover N with less than one chunk per thread to spare and
-- every thread has a chunk.  (k is both families' blocks per SM, so it
-- sizes the grid as well as capping registers.)
local function fits(T, p, s)
  local cols = T * p.chunks * 8
  return cols >= s.N and cols - s.N < T * 8 and T * 8 <= s.N
end

return normtune.sweep {
  op = "rmsnorm_bwd",
  dtype = "bf16",
  -- and rows past 16384, against the loop family the default sweep picked
  -- there (persistent stops at 16384)
  shapes = normtune.join(normtune.grid({4096, 8192, 16384}, {256, 1024, 4096}),
                         normtune.grid({18432, 20480, 32768, 65536}, {1024, 4096, 16384})),
  families = {
    -- (the persistent family has no register rule: stages = 1 with more
    -- than 1024 chunks a block, or k = 2, spills at these rows)
    persistent = {
      params = {block = {128, 256, 512, 1024}, chunks = normtune.range(1, 16),
                stages = {1, 2}, k = {0, 1}},
      where = function(p, s)
        return s.N <= 16384 and fits(p.block, p, s) and (p.stages > 1 or p.chunks * p.block <= 1024)
      end,
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
