-- waves_bwd.lua: one config each at M around the shipped shapes, to see
-- whether time moves with whole waves of rows (M / 132 rounded up)
return normtune.sweep {
  op = "rmsnorm_bwd",
  dtype = "bf16",
  shapes = {{M = 3960, N = 20480}, {M = 4092, N = 20480}, {M = 4096, N = 20480}, {M = 4224, N = 20480},
            {M = 960, N = 65536}, {M = 1024, N = 65536}, {M = 1080, N = 65536}},
  families = {
    persistent = {params = {block = {512}, chunks = {5}, stages = {2}, k = {1}},
                  where = function(p, s) return s.N == 20480 end},
    cstage = {params = {cluster = {8}, block = {256}, chunks = {4}, stages = {3}, k = {2}},
              where = function(p, s) return s.N == 65536 end},
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
