-- cols alone at few rows (an experiment: the tile kernel's loads before its wait)
return normtune.sweep {
  op = "rmsnorm_bwd",
  dtypes = {"bf16"},
  shapes = {{M = 256, N = 2048}, {M = 256, N = 4096}, {M = 256, N = 8192}, {M = 256, N = 16384},
            {M = 512, N = 8192}, {M = 1024, N = 4096}},
  families = {
    cols = {
      params = {block = {256, 512, 1024}, cc = {2, 4, 8, 16, 32}, rows = {1, 2, 4, 8}, k = {0, 2}},
      where = function(p, s)
        return p.block % p.cc == 0 and p.block // p.cc * p.rows <= s.M and
               (p.k == 0 or p.k * p.block <= 2048)
      end,
    },
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
