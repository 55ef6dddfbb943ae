-- held.lua -- rmsnorm_bwd.held (persistent's pipeline, each row read from
-- shared memory once and held in registers between its two passes) beside
-- persistent, every config of both that the default sweep's rules keep,
-- bf16, at few and mid rows by N = 1024 .. 8192 (and 16384 at two M).
local SMEM_BUDGET = 200 * 1024
local SMEM_PER_SM = 228 * 1024
local THREADS_PER_SM = 2048
local E = 8
local function ok(p, s)
  local cols = p.block * p.chunks * E
  if cols < s.N or cols - s.N >= p.block * E then return false end
  if p.block * E > s.N then return false end
  if p.chunks * E > 64 then return false end
  local bytes = (32 * p.stages + E * 2) * p.block * p.chunks
  if bytes > SMEM_BUDGET then return false end
  if p.k > 0 and p.k * (bytes + 512) > SMEM_PER_SM then return false end
  return p.k * p.block <= THREADS_PER_SM
end
local params = {block = {64, 128, 256, 512, 1024}, chunks = normtune.range(1, 16),
                stages = {2, 3, 4}, k = {0, 1, 2, 4}}
return normtune.sweep {
  op = "rmsnorm_bwd",
  dtypes = {"bf16"},
  shapes = normtune.join(normtune.grid({1024, 2048, 4096, 8192}, {256, 1024, 4096, 16384}),
                         normtune.grid({16384}, {1024, 4096})),
  families = {
    persistent = {params = params, where = ok},
    held = {params = params, where = function(p, s) return p.chunks <= 4 and ok(p, s) end},
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
