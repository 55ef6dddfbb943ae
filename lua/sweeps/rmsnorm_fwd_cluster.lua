-- rmsnorm_fwd_cluster.lua -- the forward's cluster family (one row per
-- thread block cluster, sm_90 and newer) against the default sweep's
-- winners at long rows: row (the row in registers) and stage (the row in
-- shared memory).  Not part of `make tune`: on an H200 (2026-12-01) the
-- best cluster config was 23-62% slower than the best of row and stage at
-- each of these 10 problems (data/peers-fwd-h200.md, "Rows split over a
-- cluster").  Run it on new hardware to see whether that still holds:
--
--   normtune run lua/sweeps/rmsnorm_fwd_cluster.lua --db probe.db
--   normtune query --db probe.db shape 16384 4096
--
-- 182 points over 10 problems (bf16 x with a bf16 or fp32 weight) that
-- where() keeps, 176 of which the families can run.

-- x is bf16 here: 8 elements per 16-byte chunk.  A config fits when its
-- threads per row (T) cover N with less than one chunk per thread to spare,
-- and its k caps registers (a k of k * block <= 256 builds k = 0's code).
local function fits(T, p, s)
  local cols = T * p.chunks * 8
  return cols >= s.N and cols - s.N < T * 8 and (p.k == 0 or p.k * p.block > 256)
end

return normtune.sweep {
  op = "rmsnorm_fwd",
  dtypes = {"bf16", {x = "bf16", w = "f32"}},
  shapes = {{M = 4096, N = 16384}, {M = 8192, N = 16384}, {M = 1024, N = 16384},
            {M = 4096, N = 8192}, {M = 32768, N = 4096}},
  families = {
    cluster = {
      params = {cluster = {2, 4}, block = {128, 256, 512}, chunks = normtune.range(1, 16),
                k = {0, 2}},
      where = function(p, s) return fits(p.cluster * p.block, p, s) end,
    },
    row = {
      params = {block = {32, 256, 512}, chunks = normtune.range(1, 16), k = {0, 2}},
      where = function(p, s) return fits(p.block, p, s) end,
    },
    stage = {
      params = {block = {512}, chunks = normtune.range(1, 16), k = {0, 2}, wg = {0, 1}},
      where = function(p, s) return fits(p.block, p, s) end,
    },
  },
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
