-- rmsnorm_fwd.wstage beside warp (the default sweep's warp space) at short rows, bf16
local function E(s) return s.dtype.x == "f32" and 4 or 8 end
local function covers(p, s)
  local cols = p.tpr * p.chunks * E(s)
  return cols >= s.N and cols - s.N < p.tpr * E(s)
end
local join = normtune.join
return normtune.sweep {
  op = "rmsnorm_fwd",
  dtypes = {"bf16"},
  shapes = join(normtune.grid({64, 128, 256}, {262144, 1048576}), {{M = 65536, N = 256}},
                normtune.grid({512, 768}, {8192, 65536}),
                {{M = 131072, N = 64}, {M = 32768, N = 512}, {M = 1024, N = 1024}, {M = 16384, N = 1024}}),
  families = {
    warp = {
      params = {tpr = {4, 8, 16, 32}, block = {128, 256, 512}, chunks = normtune.range(1, 16),
                k = {0, 4, 8}},
      where = covers,
    },
    wstage = {
      params = {tpr = {4, 8, 16, 32}, block = {128, 256, 512}, chunks = normtune.range(1, 4),
                stages = {2, 3, 4}, k = {0, 2, 4}},
      where = covers,
    },
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
