-- rematch.lua -- three variants that differ only in a launch bound their
-- kernel does not need (the same code, the same speed), for the test of
-- warm's interleaved re-measure on a GPU (tests/gpu/test_rematch.sh).
return normtune.sweep {
  op = "rmsnorm_fwd",
  shapes = {{M = 4096, N = 4096}},
  families = {row = {params = {block = {256}, chunks = {2}, k = {0, 2, 4}}}},
  search = {strategy = "warm"},
  timing = {warmup = 2, min_samples = 10, max_samples = 40, rel_ci = 0.05},
}
