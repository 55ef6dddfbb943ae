-- pcluster beside persistent at few rows, bf16
local SMEM_BUDGET = 200 * 1024
local SMEM_PER_SM = 228 * 1024
local THREADS_PER_SM = 2048
local function base(p, s, extra)
  local E = 8
  local cols = p.block * p.chunks * E
  if cols < s.N or cols - s.N >= p.block * E then return false end
  if p.block * E > s.N then return false end
  if p.chunks * E > 64 then return false end
  local bytes = (p.stages == 1 and 0 or (32 * p.stages + E * 2) * p.block * p.chunks) + extra * p.block * p.chunks
  if bytes > SMEM_BUDGET then return false end
  if p.k > 0 and p.k * (bytes + 512) > SMEM_PER_SM then return false end
  if p.k * p.block > THREADS_PER_SM then return false end
  return true
end
return normtune.sweep {
  op = "rmsnorm_bwd",
  dtypes = {"bf16"},
  shapes = normtune.grid({1024, 4096, 8192}, {256, 1024, 2048}),
  families = {
    persistent = {params = {block = {64, 128, 256, 512, 1024}, chunks = normtune.range(1, 16),
                            stages = {1, 2, 3, 4}, k = {0, 1, 2, 4}},
                  where = function(p, s) return base(p, s, 0) end},
    pcluster = {params = {cluster = {2, 4, 8}, block = {64, 128, 256, 512, 1024}, chunks = normtune.range(1, 16),
                          stages = {1, 2, 3}, k = {0, 2, 4}},
                where = function(p, s) return base(p, s, 32) end},
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
