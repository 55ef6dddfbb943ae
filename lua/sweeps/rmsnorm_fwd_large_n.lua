-- rmsnorm_fwd_large_n.lua -- the forward at rows longer than the default
-- sweep's (N = 18432 .. 65536; the library takes N up to 65536): the loop
-- family, which walks a row in tiles of block * chunks 16-byte chunks twice
-- (the sum of squares, then y, x read again mostly from L2) on any device,
-- against the families that hold a whole long row: cluster (in the
-- registers of a thread block cluster of 2, 4 or 8 blocks, sm_90 and
-- newer), stage (in shared memory: block * chunks * 16 bytes, up to N =
-- 65536 for 16-bit x) and row (in registers: up to N = 32768 for 16-bit x
-- without spilling).  Not part of `make tune` (the default sweeps are
-- lua/sweeps/<op>.lua); `make test-compile` compiles it.
--
--   normtune run lua/sweeps/rmsnorm_fwd_large_n.lua --db large.db
--   normtune query --db large.db shape 65536 4096
--
-- bf16 at the 12 shapes of N in {18432, 20480, 32768, 65536} by M in {1024,
-- 4096, 16384}, fp32 at 4096 x 65536; `normtune list --count` prints the
-- variants per problem (the families' register and shared-memory rules
-- refuse some of those where() keeps).

-- Elements per 16-byte chunk of x.
local function E(s) return s.dtype.x == "f32" and 4 or 8 end

-- threads * chunks * E cover N, with less than one chunk per thread to spare.
local function covers(T, chunks, s)
  local cols = T * chunks * E(s)
  return cols >= s.N and cols - s.N < T * E(s)
end

return normtune.sweep {
  op = "rmsnorm_fwd",
  dtypes = {"bf16", {x = "f32", shapes = {{M = 4096, N = 65536}}}},
  shapes = normtune.grid({18432, 20480, 32768, 65536}, {1024, 4096, 16384}),
  families = {
    -- one row per block, walked in tiles; k caps registers (a k with
    -- k * block <= 256 builds k = 0's code)
    loop = {
      params = {block = {256, 512, 1024}, chunks = {1, 2, 4}, k = {0, 2}},
      where = function(p, s) return p.k == 0 or p.k * p.block > 256 end,
    },
    -- one row per cluster: threads * chunks * E cover N with less than one
    -- chunk per thread to spare
    cluster = {
      params = {cluster = {2, 4, 8}, block = {256, 512, 1024}, chunks = normtune.range(1, 16),
                k = {0}},
      where = function(p, s) return covers(p.cluster * p.block, p.chunks, s) end,
    },
    -- the row whole in shared memory, w loaded with y (wg = 1) or all of
    -- it once (wg = 0)
    stage = {
      params = {block = {512, 1024}, chunks = normtune.range(1, 16), k = {0}, wg = {0, 1}},
      where = function(p, s) return covers(p.block, p.chunks, s) end,
    },
    -- the row whole in registers
    row = {
      params = {block = {512, 1024}, chunks = normtune.range(1, 16), k = {0}},
      where = function(p, s) return covers(p.block, p.chunks, s) end,
    },
  },
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
