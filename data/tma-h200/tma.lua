-- the forward's tma family (rows brought in by bulk copies, stages rows
-- ahead) beside stage, row and persist at mid and long rows, bf16, every config
local E = 8
local function covers(p, s)
  local cols = p.block * p.chunks * E
  return cols >= s.N and cols - s.N < p.block * E
end
local function binds(p) return p.k == 0 or p.k * p.block > 256 end
return normtune.sweep {
  op = "rmsnorm_fwd",
  dtypes = {"bf16"},
  shapes = normtune.grid({4096, 8192, 16384, 20480, 32768, 65536}, {1024, 4096, 16384}),
  families = {
    tma = {
      params = {block = {128, 256, 512, 1024}, chunks = normtune.range(1, 16), stages = {1, 2, 3, 4},
                k = {0, 1, 2, 4}},
      where = function(p, s) return covers(p, s) and p.k * p.block <= 2048 end,
    },
    stage = {
      params = {block = {128, 256, 512, 1024}, chunks = normtune.range(1, 16), k = {0, 2, 3, 4},
                wg = {0, 1, 2, 4, 8, 16}},
      where = function(p, s)
        return covers(p, s) and binds(p) and p.k * p.block <= 2048 and
               p.wg <= p.chunks and (p.wg == 0 or p.chunks % p.wg == 0)
      end,
    },
    row = {
      params = {block = {64, 128, 256, 512, 1024}, chunks = normtune.range(1, 16), k = {0, 2, 4, 8}},
      where = function(p, s) return covers(p, s) and binds(p) end,
    },
    persist = {
      params = {block = {256, 512, 1024}, chunks = normtune.range(1, 16), stages = {1, 2},
                k = {1, 2, 4}},
      where = function(p, s)
        return s.N <= 16384 and covers(p, s) and p.k * p.block <= 2048 and
               (p.stages == 1 or p.stages * p.block * p.chunks * 16 * p.k <= 200 * 1024)
      end,
    },
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
