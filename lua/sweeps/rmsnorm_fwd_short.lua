-- rmsnorm_fwd_short.lua -- a probe: the short-row families of the forward (warp and
-- rows), swept exhaustively at per-head shapes in bf16.  Not part of
-- `make tune`.  Sweep 21 of data/results.db ran this text (everything below this
-- comment) from an uncommitted scratch path, .scratch/small_fwd.lua, on an H200
-- (GPU-42d246dd, 2026-12-02).

-- probe: short rows, both ops, exhaustive over the warp families
local function E(s) return s.dtype.x == "f32" and 4 or 8 end
local shapes = normtune.grid({64, 128, 256}, {65536, 262144, 1048576})
for _, sh in ipairs(normtune.grid({512, 768, 1024}, {8192, 65536, 262144})) do shapes[#shapes + 1] = sh end
return normtune.sweep {
  op = "rmsnorm_fwd",
  dtypes = {"bf16"},
  shapes = shapes,
  families = {
    warp = {
      params = {tpr = {4, 8, 16, 32}, block = {128, 256, 512}, chunks = {1, 2, 3, 4}, k = {0, 4, 8}},
      where = function(p, s)
        local cols = p.tpr * p.chunks * E(s)
        return cols >= s.N and cols - s.N < p.tpr * E(s)
      end,
    },
    rows = {
      params = {block = {64, 128}, chunks = {1, 2}, rows = {2, 4, 8}, k = {0, 4, 8}},
      where = function(p, s)
        local cols = p.block * p.chunks * E(s)
        return cols >= s.N and cols - s.N < p.block * E(s)
      end,
    },
  },
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
