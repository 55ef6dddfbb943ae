-- waves_fwd.lua: as waves_bwd.lua for the forward's stage at N = 65536
return normtune.sweep {
  op = "rmsnorm_fwd",
  dtype = "bf16",
  shapes = {{M = 924, N = 65536}, {M = 1024, N = 65536}, {M = 1056, N = 65536}},
  families = {
    stage = {params = {block = {512}, chunks = {16}, k = {0}, wg = {0}}},
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
