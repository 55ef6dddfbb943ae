-- rmsnorm_bwd_large_n.lua -- the backward at rows longer than the default
-- sweep's (N = 18432 .. 65536; the library takes N up to 65536): the loop
-- family, persistent blocks that walk each row in tiles of block * chunks
-- 16-byte chunks twice (the sums, then dx and an fp32 partial row of dw
-- per block), on any device.  naive stops at N = 16384; persistent would
-- need block * chunks * 8 >= N, a whole row's chunks per block, which its
-- rules (no register rule) let spill.  Not part of `make tune` (the
-- default sweeps are lua/sweeps/<op>.lua); `make test-compile` compiles it.
--
--   normtune run lua/sweeps/rmsnorm_bwd_large_n.lua --db large.db
--   normtune query --db large.db shape 65536 4096
--
-- bf16 (dw f32) at the 12 shapes of N in {18432, 20480, 32768, 65536} by M
-- in {1024, 4096, 16384}, fp32 at 4096 x 65536; `normtune list --count`
-- prints the variants per problem (the family's register rule refuses
-- the chunks a block and k leave no room for).

return normtune.sweep {
  op = "rmsnorm_bwd",
  dtypes = {"bf16", {x = "f32", shapes = {{M = 4096, N = 65536}}}},
  shapes = normtune.grid({18432, 20480, 32768, 65536}, {1024, 4096, 16384}),
  families = {
    -- k: blocks per SM (0: as many as fit), which also caps registers and
    -- sets how many partial rows of dw the grid keeps in L2
    loop = {params = {block = {128, 256, 512, 1024}, chunks = {1, 2, 3, 4}, k = {0, 1, 2}}},
  },
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
