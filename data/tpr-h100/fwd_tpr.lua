-- rmsnorm_fwd.warp with 1 and 2 threads a row beside the default sweep's
-- 4 to 32, at the short rows of the default sweep and of make bench, bf16,
-- every config (the family takes tpr 1 to 32; the default sweep only 4 to
-- 32, so 1 and 2 were never measured)
local function E(s) return s.dtype.x == "f32" and 4 or 8 end
local function covers(p, s)
  local cols = p.tpr * p.chunks * E(s)
  return cols >= s.N and cols - s.N < p.tpr * E(s)
end
local join = normtune.join
return normtune.sweep {
  op = "rmsnorm_fwd",
  dtypes = {"bf16"},
  shapes = join(normtune.grid({64}, {65536, 131072, 262144, 1048576}),
                normtune.grid({128, 256}, {65536, 262144, 1048576}),
                normtune.grid({512}, {8192, 32768, 65536}), normtune.grid({768}, {8192, 65536})),
  families = {
    warp = {
      params = {tpr = {1, 2, 4, 8, 16, 32}, block = {128, 256, 512}, chunks = normtune.range(1, 16),
                k = {0, 4, 8}},
      where = covers,
    },
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
