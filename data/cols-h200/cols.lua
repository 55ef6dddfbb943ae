-- the backward's cols family (rows' statistics, then column tiles that
-- hold every row) beside persistent and warp at few rows and short ones,
-- bf16, every config
local E = 8
local function smem(p)
  if p.stages == 1 then return 0 end
  return (32 * p.stages + E * 2) * p.block * p.chunks
end
return normtune.sweep {
  op = "rmsnorm_bwd",
  dtypes = {"bf16"},
  shapes = normtune.join(normtune.grid({1024, 4096, 8192}, {256, 1024, 2048, 4096}),
                         {{M = 8192, N = 768}, {M = 32768, N = 512}}),
  families = {
    cols = {
      params = {block = {256, 512, 1024}, cc = {2, 4, 8, 16, 32}, rows = {1, 2, 4, 8}, k = {0, 2}},
      where = function(p, s)
        return p.block % p.cc == 0 and p.block // p.cc * p.rows <= s.M and
               (p.k == 0 or p.k * p.block <= 2048)
      end,
    },
    warp = {
      params = {tpr = {4, 8, 16, 32}, block = {128, 256, 512}, chunks = normtune.range(1, 4),
                rows = {1, 2, 4}, k = {0, 2}},
      where = function(p, s)
        local cols = p.tpr * p.chunks * E
        return s.N <= 1024 and cols >= s.N and cols - s.N < p.tpr * E
      end,
    },
    persistent = {
      params = {block = {64, 128, 256, 512, 1024}, chunks = normtune.range(1, 16),
                stages = {1, 2, 3, 4}, k = {0, 1, 2, 4}},
      where = function(p, s)
        local cols = p.block * p.chunks * E
        if cols < s.N or cols - s.N >= p.block * E then return false end
        if p.block * E > s.N then return false end
        if p.chunks * E > 64 then return false end
        local bytes = smem(p)
        if bytes > 200 * 1024 then return false end
        if p.k > 0 and p.k * (bytes + 512) > 228 * 1024 then return false end
        if p.k * p.block > 2048 then return false end
        return true
      end,
    },
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
