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
-- rmsnorm_fwd_n8.lua -- the default forward sweep's second part: rows of
-- an odd number of 16-byte chunks, N + 8 beside each hidden size of
-- lua/sweeps/rmsnorm_fwd.lua from 1024 to 16384, at M = 4096 and 16384,
-- bf16.  Every other such row starts 16 bytes past a 32-byte multiple,
-- inside a 128-byte line; `arow` and `awarp` (kernels/rmsnorm_fwd/arow.cuh,
-- awarp.cuh), row's and warp's kernels with each row's loads shifted to
-- its line, run them beside `rows`.  `make tune` runs this after
-- rmsnorm_fwd.lua (Makefile, SWEEP), and the library serves every M of
-- these N from them (docs/dispatch-header.md, the lookup); before, it
-- stretched the tuned N's config (the export's stretch), up to 14% behind
-- the best here.
--
-- Measured whole on an H200 with every family of the default sweep beside
-- arow and awarp (data/n8tune-h200/, GPU-c6b3b3ed and GPU-57b3a39b,
-- 2026-12-04): at every shape one of rows, arow and awarp was within 0.2%
-- of the best (warp 0.4% ahead of awarp at 16384 x 1032, stage 0.2% ahead
-- of rows at 4096 x 8200), so the others are left out: 358 variants.
-- Few shapes, families the default sweep's search has no results of:
-- every variant is measured (about 15 s on an H200).

local E = 8                         -- bf16 elements per 16-byte chunk

-- threads * chunks * E covers N with less than one chunk per thread to
-- spare, and spare chunks more (the shifted families' largest shift).
local function covers(threads, chunks, s, spare)
  local cols = threads * chunks * E
  return cols >= s.N and cols - s.N < (threads + spare) * E
end

-- For row and rows, k only caps registers (65536 / (k * block), at most
-- 255): a k whose cap does not bind builds the same code as k = 0.
local function binds(p) return p.k == 0 or p.k * p.block > 256 end

return normtune.sweep {
  op = "rmsnorm_fwd",
  dtype = "bf16",
  shapes = shapes,
  families = {
    rows = {
      params = {block = {64, 128, 256, 512}, chunks = normtune.range(1, 16), rows = {2},
                k = {0, 2, 4, 8}},
      where = function(p, s) return covers(p.block, p.chunks, s, 0) and binds(p) end,
    },
    arow = {
      params = {block = {32, 64, 128, 256, 512, 1024}, chunks = normtune.range(1, 16),
                k = {0, 2, 4, 8, 16}},
      where = function(p, s) return covers(p.block, p.chunks, s, 8) and binds(p) end,
    },
    awarp = {
      params = {tpr = {4, 8, 16, 32}, block = {128, 256, 512}, chunks = normtune.range(1, 16),
                k = {0, 4, 8}},
      where = function(p, s) return s.N <= 4104 and covers(p.tpr, p.chunks, s, 8) end,
    },
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
