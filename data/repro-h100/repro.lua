-- repro.lua: the same variants measured in separate runs, to see how far a
-- median moves between runs of one GPU (issue 23's misses at small shapes)
local E = 8
return normtune.sweep {
  op = "rmsnorm_bwd",
  dtype = "bf16",
  shapes = {{M = 1024, N = 3072}, {M = 1024, N = 4096}, {M = 16384, N = 1024}},
  families = {
    persistent = {
      params = {block = {64, 128, 256, 512}, chunks = normtune.range(1, 8),
                stages = {2, 3}, k = {1, 2}},
      where = function(p, s)
        local cols = p.block * p.chunks * E
        return cols >= s.N and cols - s.N < p.block * E and p.block * E <= s.N
      end,
    },
    wstage = {
      params = {tpr = {32}, block = {128, 256}, chunks = {4}, stages = {2, 3}, k = {0, 2}},
      where = function(p, s) return s.N == 1024 end,
    },
    warp = {
      params = {tpr = {32}, block = {128, 256}, chunks = {4}, rows = {1}, k = {0, 2}},
      where = function(p, s) return s.N == 1024 end,
    },
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
