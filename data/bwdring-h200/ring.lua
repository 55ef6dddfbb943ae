-- ring.lua -- rmsnorm_bwd.ring (persistent's chain through a ring of
-- chunks + spare slots a thread: spare/chunks of the next row in flight
-- while a row is reduced) beside persistent and held, every config of the
-- three that covers the row exactly and fits, bf16, at the mid shapes
-- where the H200's persistent was slowest with 64 KB or more ahead (N =
-- 8192 and 12288) and where a whole row ahead is 64 KB (N = 16384), at M =
-- 4096 and 16384; docs/guide.md, "The mid shapes profiled".
local E = 8
local SMEM_BLOCK_MAX = 227 * 1024 - 512   -- dynamic shared memory a block may have
local function exact(p, s) return p.block * p.chunks * E == s.N end
return normtune.sweep {
  op = "rmsnorm_bwd",
  dtypes = {"bf16"},
  shapes = {{M = 4096, N = 8192}, {M = 16384, N = 8192}, {M = 4096, N = 12288},
            {M = 16384, N = 12288}, {M = 4096, N = 16384}, {M = 8192, N = 16384}},
  families = {
    ring = {
      params = {block = {256, 512, 1024}, chunks = normtune.range(1, 8), spare = normtune.range(1, 8),
                k = {1}},
      where = function(p, s)
        return exact(p, s) and p.spare <= p.chunks and 2 * (p.chunks + p.spare) * p.block * 16 <= SMEM_BLOCK_MAX
      end,
    },
    persistent = {
      params = {block = {256, 512, 1024}, chunks = normtune.range(1, 8), stages = {2, 3}, k = {1, 2}},
      where = function(p, s) return exact(p, s) end,
    },
    held = {
      params = {block = {256, 512, 1024}, chunks = normtune.range(1, 4), stages = {2, 3}, k = {1, 2}},
      where = function(p, s) return exact(p, s) end,
    },
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
}
