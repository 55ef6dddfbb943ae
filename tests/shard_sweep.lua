-- shard_sweep.lua -- the sweep tests/test_shard.sh and tests/test_slurm.sh
-- split into shards and run with `run --simulate data/results.db`: six
-- bf16 forward shapes whose every point data/results.db holds, two
-- families, exhaustive (so the shards' results are the whole run's,
-- whatever the simulated draws).
return normtune.sweep {
  op = "rmsnorm_fwd",
  dtype = "bf16",
  shapes = normtune.grid({1024, 2048, 4096}, {4096, 16384}),
  families = {warp = {params = {tpr = {32}, block = {128, 256}, chunks = {4, 8}, k = {0}},
                      where = function(p, s) return p.tpr * p.chunks * 8 >= s.N end},
              row = {params = {block = {128, 256, 512}, chunks = {1, 2, 4}, k = {0, 2}},
                     where = function(p, s) return p.block * p.chunks * 8 >= s.N end}},
  search = {strategy = "exhaustive"},
}
