-- unrunnable.lua -- the sweep tests/gpu/test_unrunnable.sh runs: a shape in
-- the middle whose tensors need far more memory than any GPU has
-- (2^30 x 16384 bf16 is 32 TiB a tensor), between two small shapes.
return normtune.sweep {
  op = "rmsnorm_bwd",
  shapes = {{M = 1024, N = 1024}, {M = 1073741824, N = 16384}, {M = 512, N = 2048}},
  families = {naive = {params = {nsplit = {64}, partial = {"f32"}}}},
  timing = {warmup = 2, min_samples = 5, max_samples = 10, rel_ci = 0.5},
}
