-- ring.lua -- rmsnorm_fwd.ring (stage's rows walked by a resident grid
-- through a ring of chunks + spare slots a thread, the next row copied
-- ahead) beside stage, every config of both that fits, bf16, at the
-- default forward's rows past 16384 at M = 1024 and 4096 and at two
-- shorter rows.
local SMEM_BLOCK_MAX = 227 * 1024 - 256   -- dynamic shared memory a block may have
local SMEM_PER_SM = 228 * 1024
local E = 8
local function snug(p, s)
  local cols = p.block * p.chunks * E
  return cols >= s.N and cols - s.N < p.block * E
end
return normtune.sweep {
  op = "rmsnorm_fwd",
  dtypes = {"bf16"},
  shapes = {{M = 1024, N = 65536}, {M = 1024, N = 32768}, {M = 4096, N = 32768},
            {M = 4096, N = 20480}, {M = 1024, N = 16384}, {M = 4096, N = 8192}},
  families = {
    stage = {
      params = {block = {256, 512, 1024}, chunks = normtune.range(1, 16), k = {0, 1, 2, 3, 4},
                wg = {0, 1, 4}},
      where = function(p, s)
        if not snug(p, s) then return false end
        if p.wg > 0 and p.chunks % p.wg ~= 0 then return false end
        local bytes = p.block * p.chunks * 16
        return bytes <= SMEM_BLOCK_MAX and (p.k == 0 or p.k * (bytes + 1024) <= SMEM_PER_SM)
      end,
    },
    ring = {
      params = {block = {256, 512, 1024}, chunks = normtune.range(1, 16),
                spare = {2, 4, 8, 16}, k = {0, 1, 2}, wg = {0, 1, 4}},
      where = function(p, s)
        if not snug(p, s) or p.spare > p.chunks then return false end
        if p.wg > 0 and p.chunks % p.wg ~= 0 then return false end
        local bytes = p.block * (p.chunks + p.spare) * 16
        return bytes <= SMEM_BLOCK_MAX and (p.k == 0 or p.k * (bytes + 1024) <= SMEM_PER_SM)
      end,
    },
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
