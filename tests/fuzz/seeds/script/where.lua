-- a where() that rejects some points, two shapes, random search
return normtune.sweep {
  op = "rmsnorm_bwd", dtype = "bf16",
  shapes = {{M = 1024, N = 4096}, {M = 7, N = 16384}},
  families = {
    persistent = {
      params = {block = {64, 128, 256}, chunks = normtune.range(1, 8, 1), stages = {1, 2, 3}, k = {0, 2}},
      where = function(p, s) return p.block * p.chunks * 8 >= s.N end,
    },
    naive = {params = {nsplit = {32, 64}, partial = {"bf16", "f32"}}},
  },
  search = {strategy = "random", budget = 10, seed = 7},
  timing = {warmup = 3, min_samples = 5, max_samples = 20, rel_ci = 0.05},
  eps = 1e-5,
}
