-- the forward's shifted families (awarp, arow) beside warp, row and
-- rows at N = 8 (mod 16) and their tuned neighbours, bf16, every config
-- (as run, it also listed `arows = {params = rows, where = shifted(block)}`,
-- rows with each row shifted, dropped after this run: afwd.db holds it)
local E = 8
-- T threads per row of C chunks cover N with less than a chunk a thread to
-- spare; the shifted families may spare 8 chunks more (the largest shift)
local function covers(threads, chunks, s, spare)
  local cols = threads * chunks * E
  return cols >= s.N and cols - s.N < threads * E + spare * E
end
local function binds(p) return p.k == 0 or p.k * p.block > 256 end
local function plain(T) return function(p, s) return covers(T(p), p.chunks, s, 0) and binds(p) end end
local function shifted(T) return function(p, s) return covers(T(p), p.chunks, s, 8) and binds(p) end end
local function block(p) return p.block end
local function tpr(p) return p.tpr end
local row = {block = {64, 128, 256, 512, 1024}, chunks = normtune.range(1, 16), k = {0, 4, 8}}
local rows = {block = {64, 128, 256, 512}, chunks = normtune.range(1, 16), rows = {2}, k = {0, 4, 8}}
local warp = {tpr = {8, 16, 32}, block = {128, 256, 512}, chunks = normtune.range(1, 16), k = {0, 4}}
local short = function(f) return function(p, s) return s.N <= 4104 and f(p, s) end end
return normtune.sweep {
  op = "rmsnorm_fwd",
  dtypes = {"bf16"},
  shapes = normtune.grid({1024, 1032, 2056, 4096, 4104, 8200, 12296}, {4096, 16384}),
  families = {
    row = {params = row, where = plain(block)},
    arow = {params = row, where = shifted(block)},
    rows = {params = rows, where = plain(block)},
    warp = {params = warp, where = short(plain(tpr))},
    awarp = {params = warp, where = short(shifted(tpr))},
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
