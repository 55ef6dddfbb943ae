-- smoke.lua -- a tiny sweep for quick GPU checks: 3 shapes,//////////////////////////////////////// a few variants each.
--
-- One small, one odd-sized (N = 3 x 1024, M below a typical persistent grid)
-- and one large shape; 2 naive and up to 4 persistent variants per shape
-- (`normtune list lua/sweeps/smoke.lua` shows them).  Few timing samples:
-- this checks that compile, validation and timing work end to end, not speed.

return normtune.sweep {
  op = "rmsnorm_bwd",
 dtypes = "bf16",
  shapes = {
    {M = 1024, N = 1024},
    {M = 77, N = 3072},      -- fewer rows than SMs x k: some blocks get no row
    {M = 16384, N = 8192},
  },
  families = {
    naive = {params = {nsplit = {64}, partial = {"bf16", "f32"}}},
    persistent = {
      params = {block = {128, 256}, chunks = normtune.range(1, 8), stages = {1, 2}, k = {0}},
      -- the smallest chunks that covers the row, and a pipeline that fits
      where = function(p, s)
        local cols = p.block * p.chunks * 4
        return cols >= s.N and cols - s.N < p.block * 8
           and p.stages * 2 * p.block * p.chunks * 16 <= 200 * 1024
      end,
    },
  },
  timing = {warmup = 3, min_samples = 5, max_samples = 20, rel_ci = 0.05},
}
