-- cstage_k.lua -- rmsnorm_fwd.cstage at cstage.lua's shapes with k = 3 ..
-- 8 blocks per SM (cstage.lua's k 0 .. 2 left 80-128 registers a thread:
-- about 16 warps an SM): every point, an exhaustive run.
local function E(s) return s.dtype.x == "f32" and 4 or 8 end
local function covers(threads, chunks, s)
  local cols = threads * chunks * E(s)
  return cols >= s.N and cols - s.N < threads * E(s)
end
local function binds(p) return p.k == 0 or p.k * p.block > 256 end
local join = normtune.join
return normtune.sweep {
  op = "rmsnorm_fwd",
  dtypes = {"bf16"},
  shapes = join(normtune.grid({18432, 20480, 32768, 65536}, {1024, 4096, 16384}),
                normtune.grid({16384}, {4096, 8192})),
  families = {
    -- (cstage_k.lua: cstage alone with the register caps of k = 3 .. 8)
    cstage = {
      params = {cluster = {2, 4, 8}, block = {128, 256, 512, 1024}, chunks = normtune.range(1, 8),
                stages = {2, 3, 4}, k = {3, 4, 6, 8}},
      where = function(p, s) return covers(p.cluster * p.block, p.chunks, s) end,
    },
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
