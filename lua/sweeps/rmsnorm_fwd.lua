-- rmsnorm_fwd.lua -- the default forward sweep: RMSNorm forward (y = x *
-- rstd * w, rstd in fp32), bf16 and fp16 activations with the weight in the
-- activation dtype or fp32, and fp32 at fewer shapes.
--
-- bf16: the grid of the hidden sizes and rows people run, 16 N from 1024
-- to 16384 by 8 M from 256 to 131072 (128 shapes; "Kernels at every
-- shape", item 5), 13 short rows (per-head norms: N = 64 .. 768, M up to
-- 2^20) and 12 rows past 16384 (N = 18432 .. 65536 by M = 1024, 4096,
-- 16384).  The bf16 input with an fp32 weight (mixed-precision training
-- keeps norm weights in fp32): the grid's 50 core shapes (10 N by 5 M),
-- the short and the long rows.  fp16 with either weight the 12 shapes of N in {1024, 4096,
-- 16384} by M in {1024, 4096, 16384, 65536} plus two short rows and 4096 x
-- 32768 (their own `shapes`), fp32 the 6 of those N by M in {4096, 65536}
-- plus two.  A chunk is 16 bytes of x: E = 8 elements for bf16 and fp16, 4
-- for fp32, so a row takes threads * chunks * E columns; where() keeps the
-- chunk counts that cover N with at most one partly filled chunk per
-- thread (the smallest that fits), which is where the fast points are.
-- The families' checks let 13402 of the points where() keeps run, over
-- 266 problems (9696 over 188 before the grid); `normtune list
-- lua/sweeps/rmsnorm_fwd.lua --count` prints them per problem and family.
-- (Before the short and long rows: 6211 of 130 problems, which one H200
-- measured exhaustively in about 5 minutes, 2026-12-01.)
-- The search (`warm`) measures BUDGET of them per core shape on average,
-- and LATER at each of the grid's 78 other shapes: replay on
-- data/results.db (docs/lua-api.md) gives the numbers.

-- Variants measured per core shape, on average (8 of their 52): replayed
-- cold on data/results.db, 8 there and LATER at the grid's other shapes
-- spend 13.6% of the sweep and pick within 2% of the best at 98.1% of the
-- shapes (the worst 1.04x at seed 0; 97.8% and 1.05x over 5 seeds, 96.4%
-- and 1.08x over 20), since those shapes are searched as from stored
-- results (2026-12-05; 96.6%, 96.5% and 95.6% before).
-- Before the grid, 8 spent 14.8% for 99% of the shapes (the worst 1.03x
-- at seed 0, 1.06x over 5 seeds, 1.08x over 20; the search of
-- 2026-12-04); with the grid and 8 at every shape, 15.2% for 92.5% (1.06x;
-- 91.7% and 1.11x over 5 seeds).
local BUDGET = 8
-- Variants measured at each of the grid's shapes outside its core (the new
-- hidden sizes 1536, 2560, 2880, 3584, 11008, 14336 and the new M 256,
-- 2048, 131072): a budget of their own (shapes[i].budget), so that a cold
-- campaign tunes them after every other shape, starting from those
-- results (search/drive.c, plan()); from stored results BUDGET_STORED.
local LATER = 5
-- Variants measured per shape when the search starts from the stored
-- results of the GPU model at the other shapes (not a cold campaign): they
-- rank the points well enough for fewer.  Replayed from the neighbours on
-- data/results.db, 5 spend 9.9% of the sweep and pick within 2% of the
-- best at 99.2% of the shapes (the worst 1.03x; the same over 5 seeds;
-- before the grid 9.7%, every shape, 1.02x; BUDGET there spent 15.5% for
-- the same, 1.01x).
local BUDGET_STORED = 5

-- The grid's core, tuned first in a cold campaign, and the whole grid.
local Ns = {1024, 2048, 3072, 4096, 5120, 6144, 7168, 8192, 12288, 16384}
local Ms = {1024, 4096, 8192, 16384, 65536}
local GNs = {1024, 1536, 2048, 2560, 2880, 3072, 3584, 4096, 5120, 6144, 7168, 8192, 11008,
             12288, 14336, 16384}
local GMs = {256, 1024, 2048, 4096, 8192, 16384, 65536, 131072}

local join = normtune.join

local core = normtune.grid(Ns, Ms)
-- The grid, N outer as the core (from stored results the search takes the
-- shapes in this order: by N, each N's M on either side of a shape tuned
-- before it), its shapes outside the core with a budget of their own.
local grid = {}
do
  local incore = {}
  for _, s in ipairs(core) do incore[s.M .. "x" .. s.N] = true end
  for _, s in ipairs(normtune.grid(GNs, GMs)) do
    grid[#grid + 1] = incore[s.M .. "x" .. s.N] and s or {M = s.M, N = s.N, budget = LATER}
  end
end

-- Short rows: per-head norms (QK-norm: N is the head dimension, M tokens x
-- heads) and small hidden sizes.
local short = join(normtune.grid({64, 128, 256}, {65536, 262144, 1048576}),
                   normtune.grid({512, 768}, {8192, 65536}))
-- Rows past 16384: the hidden sizes of the largest models.
local long = normtune.grid({18432, 20480, 32768, 65536}, {1024, 4096, 16384})
local few = join(normtune.grid({1024, 4096, 16384}, {1024, 4096, 16384, 65536}),
                 {{M = 262144, N = 128}, {M = 65536, N = 512}, {M = 4096, N = 32768}})
local fp32 = join(normtune.grid({1024, 4096, 16384}, {4096, 65536}), {{M = 262144, N = 128},
                                                                        {M = 4096, N = 32768}})

-- Elements per 16-byte chunk of x.
local function E(s) return s.dtype.x == "f32" and 4 or 8 end

-- threads * chunks * E covers N, with less than one chunk per thread to spare.
local function covers(threads, chunks, s)
  local cols = threads * chunks * E(s)
  return cols >= s.N and cols - s.N < threads * E(s)
end

-- For row and rows, k only caps registers (65536 / (k * block), at most
-- 255): a k whose cap does not bind builds the same code as k = 0.
local function binds(p) return p.k == 0 or p.k * p.block > 256 end

return normtune.sweep {
  op = "rmsnorm_fwd",
  dtypes = {
    "bf16",
    {x = "bf16", w = "f32", shapes = join(core, short, long)},
    {x = "f16", shapes = few},
    {x = "f16", w = "f32", shapes = few},
    {x = "f32", shapes = fp32},
  },
  shapes = join(grid, short, long),
  families = {
    -- one row per block, the row in registers
    row = {
      params = {block = {32, 64, 128, 256, 512, 1024}, chunks = normtune.range(1, 16),
                k = {0, 2, 4, 8, 16}},
      where = function(p, s) return covers(p.block, p.chunks, s) and binds(p) end,
    },
    -- 2 consecutive rows per block: w loaded once for them, one barrier
    rows = {
      params = {block = {64, 128, 256, 512}, chunks = normtune.range(1, 16), rows = {2},
                k = {0, 2, 4, 8}},
      where = function(p, s) return covers(p.block, p.chunks, s) and binds(p) end,
    },
    -- as rows, w loaded chunk by chunk after the reduction: for a weight
    -- wider than x (fp32 next to 16-bit x) at long rows, where holding w
    -- in registers would cost blocks per SM
    wlate = {
      params = {block = {128, 256, 512, 1024}, chunks = normtune.range(1, 16), rows = {1, 2},
                k = {0, 2, 4, 8}},
      where = function(p, s)
        return s.dtype.w == "f32" and s.dtype.x ~= "f32" and s.N >= 8192 and
               covers(p.block, p.chunks, s) and binds(p)
      end,
    },
    -- one row per block staged whole in shared memory (cp.async): few
    -- registers, blocks per SM set by shared memory; for long rows.  wg:
    -- w loaded wg chunks at a time as y is written, or (0) all of it once
    -- per block under the first row's loads
    stage = {
      params = {block = {128, 256, 512, 1024}, chunks = normtune.range(1, 16), k = {0, 2, 3, 4},
                wg = {0, 1, 2, 4, 8, 16}},
      where = function(p, s)
        return s.N >= 8192 and covers(p.block, p.chunks, s) and binds(p) and p.k * p.block <= 2048 and
               p.wg <= p.chunks and (p.wg == 0 or p.chunks % p.wg == 0)
      end,
    },
    -- rows past 16384, on any device: one row per block, walked in tiles
    -- twice (the row is read again from L2)
    loop = {
      params = {block = {256, 512, 1024}, chunks = {1, 2, 4}, k = {0, 2}},
      where = function(p, s) return s.N > 16384 and binds(p) end,
    },
    -- rows past 16384 on sm_90 and newer: one row per thread block
    -- cluster, each block holding its part in registers
    cluster = {
      params = {cluster = {2, 4, 8}, block = {256, 512, 1024}, chunks = normtune.range(1, 8), k = {0}},
      where = function(p, s) return s.N > 16384 and covers(p.cluster * p.block, p.chunks, s) end,
    },
    -- tpr threads per row, several rows per block: short rows
    warp = {
      params = {tpr = {4, 8, 16, 32}, block = {128, 256, 512}, chunks = normtune.range(1, 16),
                k = {0, 4, 8}},
      where = function(p, s) return s.N <= 4096 and covers(p.tpr, p.chunks, s) end,
    },
    -- a resident grid walks the rows with w in registers, the next row in
    -- flight; rows past 16384 spill its registers (stages = 1, 10 chunks)
    persist = {
      params = {block = {256, 512, 1024}, chunks = normtune.range(1, 16), stages = {1, 2},
                k = {1, 2, 4}},
      where = function(p, s)
        return s.N <= 16384 and covers(p.block, p.chunks, s) and p.k * p.block <= 2048 and
               (p.stages == 1 or p.stages * p.block * p.chunks * 16 * p.k <= 200 * 1024)
      end,
    },
  },
  -- warm: start from the stored results of this GPU model (other GPUs of
  -- it) and the shapes tuned before, climb, and measure at most BUDGET
  -- variants per shape on average (docs/lua-api.md, `search`); BUDGET_STORED
  -- a shape where the model has results at other shapes.
  search = {strategy = "warm", budget = BUDGET, budget_stored = BUDGET_STORED},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
