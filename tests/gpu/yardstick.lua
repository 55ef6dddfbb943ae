-- yardstick.lua -- the best configs of short rows (where a yardstick of one
-- block per row left most threads idle) and of one mid shape, for
-- tests/gpu/test_yardstick.sh.
return normtune.sweep {
  op = "rmsnorm_bwd",
  shapes = {{M = 65536, N = 64}, {M = 1048576, N = 128}, {M = 4096, N = 4096}},
  families = {
    warp = {params = {tpr = {4, 16}, block = {128, 512}, chunks = {1, 2}, rows = {1, 2}, k = {0}},
            where = function(p, s) return p.tpr * p.chunks * 8 == s.N end},
    persistent = {params = {block = {512}, chunks = {1}, stages = {4}, k = {1}},
                  where = function(p, s) return s.N == 4096 end},
  },
  timing = {warmup = 5, min_samples = 10, max_samples = 50, rel_ci = 0.02},
}
