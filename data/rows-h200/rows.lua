-- rows.lua -- rmsnorm_bwd.rows (persistent's pipeline over groups of 2 or
-- 4 rows, each group's sums behind one barrier) and rmsnorm_bwd.held (each
-- row read from shared memory once, held in registers) beside persistent:
-- every config of the three that the default sweep's rules keep (rows
-- and held pipelined only, held at most 4 chunks), bf16, at mid M by
-- N = 2048 .. 8192, where persistent's issue slots are busy (docs/guide.md).
local SMEM_BUDGET = 200 * 1024
local SMEM_PER_SM = 228 * 1024
local THREADS_PER_SM = 2048
local E = 8
local function ok(p, s, rows)
  local cols = p.block * p.chunks * E
  if cols < s.N or cols - s.N >= p.block * E then return false end
  if p.block * E > s.N then return false end
  if p.chunks * E > 64 then return false end
  local bytes = (32 * p.stages * rows + E * 2) * p.block * p.chunks
  if bytes > SMEM_BUDGET then return false end
  if p.k > 0 and p.k * (bytes + 512 * rows) > SMEM_PER_SM then return false end
  return p.k * p.block <= THREADS_PER_SM
end
local base = {block = {128, 256, 512, 1024}, chunks = normtune.range(1, 8),
              stages = {2, 3, 4}, k = {0, 1, 2, 4}}
local grouped = {block = base.block, chunks = base.chunks, rows = {2, 4},
                 stages = {2, 3}, k = base.k}
return normtune.sweep {
  op = "rmsnorm_bwd",
  dtypes = {"bf16"},
  shapes = normtune.grid({2048, 4096, 8192}, {1024, 4096, 16384}),
  families = {
    persistent = {params = base, where = function(p, s) return ok(p, s, 1) end},
    held = {params = base, where = function(p, s) return p.chunks <= 4 and ok(p, s, 1) end},
    rows = {params = grouped, where = function(p, s) return ok(p, s, p.rows) end},
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
