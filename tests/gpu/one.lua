-- one.lua -- a single small variant, for tests of the command line on a GPU.
return normtune.sweep {
  op = "rmsnorm_bwd",
  shapes = {{M = 1024, N = 1024}},
  families = {naive = {params = {nsplit = {64}, partial = {"f32"}}}},
  timing = {warmup = 2, min_samples = 5, max_samples = 10, rel_ci = 0.5},
}
