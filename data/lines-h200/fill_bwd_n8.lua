local shapes = {
  {M = 4096, N = 1792},
  {M = 4096, N = 1800},
  {M = 4096, N = 4608},
  {M = 4096, N = 4616},
  {M = 4096, N = 5632},
  {M = 4096, N = 9224},
  {M = 4096, N = 13312},
  {M = 4096, N = 13320},
  {M = 16384, N = 1792},
  {M = 16384, N = 1800},
  {M = 16384, N = 4608},
  {M = 16384, N = 4616},
  {M = 16384, N = 5632},
  {M = 16384, N = 9224},
  {M = 16384, N = 13312},
  {M = 16384, N = 13320},
}
-- rmsnorm_bwd_n8.lua -- the default backward sweep's second part: rows of
-- an odd number of 16-byte chunks, N + 8 beside each hidden size of
-- lua/sweeps/rmsnorm_bwd.lua from 1024 to 16384, at M = 4096 and 16384,
-- bf16.  Every other such row starts 16 bytes past a 32-byte multiple,
-- inside a 128-byte line; `aligned` (kernels/rmsnorm_bwd/aligned.cuh),
-- persistent's kernel with each row's loads shifted to its line, runs
-- them.  `make tune` runs this after rmsnorm_bwd.lua (Makefile, SWEEP),
-- and the library serves every M of these N from them
-- (docs/dispatch-header.md, the lookup); before, it stretched the tuned
-- N's config (the export's stretch), 5-15% behind the best here.
--
-- Measured whole on an H200 (data/n8tune-h200/, GPU-c6b3b3ed and
-- GPU-57b3a39b, 2026-12-04): `aligned`'s best beat `persistent`'s at all 20
-- shapes, by 0.3-9.8% (persistent is left out), and had 2 or 3 stages at
-- every one (stages 1 and 4 are left out: 310 variants of 630).  Few
-- shapes, a family the default sweep's search has no results of: every
-- variant is measured (about 20 s on an H200).

local SMEM_BUDGET = 200 * 1024      -- pipeline bytes per block we allow
local SMEM_PER_SM = 228 * 1024      -- shared memory per SM
local THREADS_PER_SM = 2048
local E = 8                         -- bf16 elements per 16-byte chunk

return normtune.sweep {
  op = "rmsnorm_bwd",
  dtype = "bf16",
  shapes = shapes,
  families = {
    -- persistent's constraints (rmsnorm_bwd.lua): the row covered with at
    -- most one partly filled chunk a thread, at most 8 chunks of dw
    -- partials a thread, the pipeline within SMEM_BUDGET and k blocks of it
    -- within an SM
    aligned = {
      params = {block = {64, 128, 256, 512, 1024}, chunks = normtune.range(1, 16), stages = {2, 3},
                k = {0, 1, 2, 4}},
      where = function(p, s)
        local cols = p.block * p.chunks * E
        if cols < s.N or cols - s.N >= p.block * E or p.block * E > s.N then return false end
        if p.chunks * E > 64 then return false end
        local bytes = (32 * p.stages + E * 2) * p.block * p.chunks
        if bytes > SMEM_BUDGET then return false end
        if p.k > 0 and p.k * (bytes + 512) > SMEM_PER_SM then return false end
        return p.k * p.block <= THREADS_PER_SM
      end,
    },
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
