-- tma.lua -- rmsnorm_bwd.tma (held's rows brought into shared memory by
-- bulk copies of thread 0, stages rows ahead) beside held and persistent,
-- every config of the three that the default sweep's rules keep (held
-- and tma at most 4 chunks a thread, as held.lua), bf16, at few, mid and
-- many rows of the hidden sizes people train with.
local SMEM_BUDGET = 200 * 1024
local SMEM_PER_SM = 228 * 1024
local THREADS_PER_SM = 2048
local E = 8
-- shared memory a block: stages rows of x and dy, and w (persistent and
-- held keep a copy of w beside them; tma holds it in registers only)
local function smem(p, wbytes) return (32 * p.stages + wbytes) * p.block * p.chunks end
local function fits(p, s, bytes)
  local cols = p.block * p.chunks * E
  if cols < s.N or cols - s.N >= p.block * E then return false end
  if p.block * E > s.N then return false end
  if bytes > SMEM_BUDGET then return false end
  if p.k > 0 and p.k * (bytes + 1024) > SMEM_PER_SM then return false end
  return p.k * p.block <= THREADS_PER_SM
end
local params = {block = {128, 256, 512, 1024}, chunks = normtune.range(1, 4),
                stages = {2, 3, 4}, k = {0, 1, 2}}
return normtune.sweep {
  op = "rmsnorm_bwd",
  dtypes = {"bf16"},
  shapes = normtune.join(normtune.grid({2048, 4096, 8192}, {1024, 4096, 16384}),
                         {{M = 256, N = 8192}}),
  families = {
    persistent = {params = params, where = function(p, s) return fits(p, s, smem(p, 2 * E)) end},
    held = {params = params, where = function(p, s) return fits(p, s, smem(p, 2 * E)) end},
    tma = {params = params, where = function(p, s) return fits(p, s, smem(p, 0)) end},
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
