-- yardstick_fwd.lua -- the forward's side of tests/gpu/yardstick.lua.
return normtune.sweep {
  op = "rmsnorm_fwd",
  shapes = {{M = 131072, N = 64}, {M = 1048576, N = 128}, {M = 4096, N = 4096}},
  families = {
    warp = {params = {tpr = {4, 8}, block = {128, 512}, chunks = {2}, k = {0}},
            where = function(p, s) return p.tpr * p.chunks * 8 == s.N end},
    rows = {params = {block = {256}, chunks = {2}, rows = {2}, k = {2}},
            where = function(p, s) return s.N == 4096 end},
  },
  timing = {warmup = 5, min_samples = 10, max_samples = 50, rel_ci = 0.02},
}
