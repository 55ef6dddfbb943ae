-- pstage.lua -- rmsnorm_fwd.pstage (stage's rows walked by a resident grid,
-- each block asking L2 for its row `pf` steps ahead) beside stage, every
-- config of both that fits, bf16, at the default forward's rows past 16384
-- at M = 1024 and 4096, one at M = 16384, and at two shorter rows (the
-- shapes of data/ring-h200/ring.lua and 16384 x 18432).
local SMEM_BLOCK_MAX = 227 * 1024 - 256   -- dynamic shared memory a block may have
local SMEM_PER_SM = 228 * 1024
local E = 8
local function snug(p, s)
  local cols = p.block * p.chunks * E
  return cols >= s.N and cols - s.N < p.block * E
end
local function fits(p)
  if p.wg > 0 and p.chunks % p.wg ~= 0 then return false end
  local bytes = p.block * p.chunks * 16
  return bytes <= SMEM_BLOCK_MAX and (p.k == 0 or p.k * (bytes + 1024) <= SMEM_PER_SM)
end
return normtune.sweep {
  op = "rmsnorm_fwd",
  dtypes = {"bf16"},
  shapes = {{M = 1024, N = 65536}, {M = 1024, N = 32768}, {M = 4096, N = 32768},
            {M = 4096, N = 20480}, {M = 16384, N = 18432}, {M = 1024, N = 16384},
            {M = 4096, N = 8192}},
  families = {
    stage = {
      params = {block = {256, 512, 1024}, chunks = normtune.range(1, 16), k = {0, 1, 2, 3, 4},
                wg = {0, 1, 4}},
      where = function(p, s) return snug(p, s) and fits(p) end,
    },
    pstage = {
      params = {block = {256, 512, 1024}, chunks = normtune.range(1, 16), k = {0, 1, 2, 3, 4},
                wg = {0, 1, 4}, pf = {0, 1, 2, 3}},
      where = function(p, s) return snug(p, s) and fits(p) end,
    },
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
