-- alone.lua -- rmsnorm_bwd.ppersist against persistent timed as make bench
-- times a call (each chain alone after an L2 flush: remeasure "alone"), at
-- the backward's goal shapes of M <= 8192 ("Kernels at every shape"), bf16:
-- at each, persistent's best pipelined config in data/results.db and the
-- same config in ppersist with pf 0, 1 and 2.  The runner's own timing
-- (chains back to back) leaves part of x and dy in L2 from the run before
-- at these sizes; this does not.
local best = {
  ["1024x1024"] = {128, 1, 3, 2}, ["8192x3584"] = {256, 2, 2, 2},
  ["1024x4096"] = {512, 1, 3, 1}, ["4096x4096"] = {512, 1, 4, 1},
  ["4096x7168"] = {256, 4, 3, 1}, ["256x8192"] = {512, 2, 2, 1},
  ["2048x8192"] = {512, 2, 2, 1}, ["4096x12288"] = {256, 6, 2, 1},
}
local function is_best(p, s)
  local b = best[s.M .. "x" .. s.N]
  return b ~= nil and p.block == b[1] and p.chunks == b[2] and p.stages == b[3] and p.k == b[4]
end
return normtune.sweep {
  op = "rmsnorm_bwd",
  dtypes = {"bf16"},
  shapes = {{M = 1024, N = 1024}, {M = 8192, N = 3584}, {M = 1024, N = 4096},
            {M = 4096, N = 4096}, {M = 4096, N = 7168}, {M = 256, N = 8192},
            {M = 2048, N = 8192}, {M = 4096, N = 12288}},
  families = {
    persistent = {
      params = {block = {128, 256, 512}, chunks = {1, 2, 4, 6}, stages = {2, 3, 4}, k = {1, 2}},
      where = is_best,
    },
    ppersist = {
      params = {block = {128, 256, 512}, chunks = {1, 2, 4, 6}, stages = {2, 3, 4}, k = {1, 2},
                pf = {0, 1, 2}},
      where = is_best,
    },
  },
  search = {strategy = "exhaustive", remeasure = "alone"},
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
