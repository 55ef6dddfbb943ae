-- cstage.lua -- rmsnorm_fwd.cstage (cluster's split rows, pipelined
-- through a shared-memory ring) beside the families that won the forward's
-- long rows (stage, loop, row) and cluster, every point of each, at the
-- default forward sweep's bf16 rows past 16384 and at 4096 and 8192 x
-- 16384: an exhaustive run.
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
    cstage = {
      params = {cluster = {2, 4, 8}, block = {128, 256, 512, 1024}, chunks = normtune.range(1, 8),
                stages = {2, 3, 4}, k = {0, 1, 2}},
      where = function(p, s) return covers(p.cluster * p.block, p.chunks, s) end,
    },
    stage = {
      params = {block = {128, 256, 512, 1024}, chunks = normtune.range(1, 16), k = {0, 2, 3, 4},
                wg = {0, 1, 2, 4, 8, 16}},
      where = function(p, s)
        return covers(p.block, p.chunks, s) and binds(p) and p.k * p.block <= 2048 and
               p.wg <= p.chunks and (p.wg == 0 or p.chunks % p.wg == 0)
      end,
    },
    loop = {
      params = {block = {256, 512, 1024}, chunks = {1, 2, 4}, k = {0, 2}},
      where = function(p, s) return s.N > 16384 and binds(p) end,
    },
    cluster = {
      params = {cluster = {2, 4, 8}, block = {256, 512, 1024}, chunks = normtune.range(1, 8), k = {0}},
      where = function(p, s) return s.N > 16384 and covers(p.cluster * p.block, p.chunks, s) end,
    },
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
