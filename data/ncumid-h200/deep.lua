-- deep.lua -- more warps an SM, or more rows in flight, at two mid shapes
-- where the H200's stored results say that both cost time (16384 x 8192:
-- persistent with 512 threads of 2 chunks took 197.80 us at 2 stages and
-- k 1, 212.82 at k 2, 214.38 at 3 stages; docs/guide.md, "The mid shapes
-- profiled"): persistent and held, every block size whose chunks cover
-- the row exactly, stages 1 (persistent) or 2 to 4, k 1 and 2, bf16, all
-- measured in one run on one GPU.
local E = 8
return normtune.sweep {
  op = "rmsnorm_bwd",
  dtypes = {"bf16"},
  shapes = {{M = 16384, N = 8192}, {M = 8192, N = 16384}},
  families = {
    persistent = {
      params = {block = {256, 512, 1024}, chunks = {1, 2, 4, 8}, stages = {1, 2, 3, 4}, k = {1, 2}},
      where = function(p, s) return p.block * p.chunks * E == s.N end,
    },
    held = {
      params = {block = {256, 512, 1024}, chunks = {1, 2, 4, 8}, stages = {2, 3, 4}, k = {1, 2}},
      where = function(p, s) return p.block * p.chunks * E == s.N end,
    },
  },
  search = {strategy = "exhaustive"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
}
