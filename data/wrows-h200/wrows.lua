-- the forward's wrows family (warp's row groups in a resident grid, each
-- with its next `rows` rows in flight) beside warp, every config of each, at the default
-- forward sweep's short rows (N <= 768) and N = 1024, every dtype
-- combination where the default sweep (lua/sweeps/rmsnorm_fwd.lua) has
-- the shape: its every shape of N <= 1024
local short = normtune.join(normtune.grid({64, 128, 256}, {65536, 262144, 1048576}),
                            normtune.grid({512, 768}, {8192, 65536}),
                            normtune.grid({1024}, {1024, 4096, 8192, 16384, 65536}))
local few = normtune.join(normtune.grid({1024}, {1024, 4096, 16384, 65536}),
                          {{M = 262144, N = 128}, {M = 65536, N = 512}})
local function E(s) return s.dtype.x == "f32" and 4 or 8 end
local function covers(threads, chunks, s)
  local cols = threads * chunks * E(s)
  return cols >= s.N and cols - s.N < threads * E(s)
end
return normtune.sweep {
  op = "rmsnorm_fwd",
  dtypes = {
    "bf16",
    {x = "bf16", w = "f32"},
    {x = "f16", shapes = few},
    {x = "f16", w = "f32", shapes = few},
    {x = "f32", shapes = normtune.join(normtune.grid({1024}, {4096, 65536}), {{M = 262144, N = 128}})},
  },
  shapes = short,
  families = {
    wrows = {
      params = {tpr = {4, 8, 16, 32}, block = {128, 256, 512}, chunks = normtune.range(1, 16),
                rows = {1, 2, 3, 4}, k = {0, 2, 4, 8}},
      where = function(p, s) return covers(p.tpr, p.chunks, s) and p.k * p.block <= 2048 end,
    },
    warp = {
      params = {tpr = {4, 8, 16, 32}, block = {128, 256, 512}, chunks = normtune.range(1, 16),
                k = {0, 4, 8}},
      where = function(p, s) return covers(p.tpr, p.chunks, s) end,
    },
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
