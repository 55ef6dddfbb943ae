-- rmsnorm_bwd.lua -- the default sweep: RMSNorm backward, bf16, both families.
--
-- 40 shapes: N (hidden size) in 1024 .. 16384, M (rows) in 1024 .. 65536.
-- Every point of each family's space is visited (exhaustive) unless the
-- family's where() below drops it.  `normtune list lua/sweeps/rmsnorm_bwd.lua
-- --count` prints how many variants that leaves per shape: 1860 variants in
-- all (320 naive, 1540 persistent, 17-60 persistent per shape), so that the sweep
-- finishes well within ten minutes on one GPU at ~0.1 s per variant.

local Ns = {1024, 2048, 3072, 4096, 5120, 6144, 7168, 8192, 12288, 16384}
local Ms = {1024, 4096, 16384, 65536}

local shapes = {}
for _, N in ipairs(Ns) do
  for _, M in ipairs(Ms) do shapes[#shapes + 1] = {M = M, N = N} end
end

-- H200 limits the persistent constraints use (the family's own check() refuses
-- what does not fit the device at hand; these only keep hopeless points out).
local SMEM_BUDGET = 200 * 1024      -- pipeline bytes per block we allow
local SMEM_PER_SM = 228 * 1024      -- shared memory per SM
local RED_SMEM = 512                -- the row reduction's static shared memory
local THREADS_PER_SM = 2048

-- Shared memory of the cp.async pipeline: `stages` rows of x and dy and one
-- of w, each block*chunks 16-byte vectors.  stages == 1 loads straight into
-- registers.
local function smem(p)
  if p.stages == 1 then return 0 end
  return (2 * p.stages + 1) * p.block * p.chunks * 16
end

return normtune.sweep {
  op = "rmsnorm_bwd",
  dtype = "bf16",
  shapes = shapes,
  families = {
    -- The 3-kernel chain: no constraint, 8 variants per shape.  bf16 partials
    -- are the post's (fast, ~1e-3 error on dw); f32 ones are exact.
    naive = {
      params = {nsplit = {32, 64, 128, 256}, partial = {"bf16", "f32"}},
    },

    -- The 2-kernel chain.  A thread holds chunks 16-byte vectors (8 bf16) of
    -- a row, so a block covers block*chunks*8 columns.
    persistent = {
      params = {
        block = {64, 128, 256, 512, 1024},
        chunks = normtune.range(1, 8), -- at most 8: 64 fp32 dw partials per thread
        stages = {1, 2, 3, 4},
        k = {0, 1, 2, 4},             -- 0 = as many blocks per SM as fit
      },
      where = function(p, s)
        local cols = p.block * p.chunks * 8
        -- the row must fit, with at most one partly filled chunk: for a given
        -- block this leaves exactly one chunks value (the smallest that fits)
        if cols < s.N or cols - s.N >= p.block * 8 then return false end
        -- no thread without work: every thread gets at least one vector
        if p.block * 8 > s.N then return false end
        -- the pipeline must fit in shared memory, also k times on one SM
        local bytes = smem(p)
        if bytes > SMEM_BUDGET then return false end
        if p.k > 0 and p.k * (bytes + RED_SMEM) > SMEM_PER_SM then return false end
        -- k blocks of block threads must fit on one SM
        if p.k * p.block > THREADS_PER_SM then return false end
        return true
      end,
    },
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
