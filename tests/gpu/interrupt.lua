-- interrupt.lua -- the sweep tests/gpu/test_interrupt.sh interrupts: two
-- large shapes (a chain lasts 0.2-0.8 ms on an H200) and 24 variants each,
-- every one timed with 200 samples, so a run lasts several seconds.
return normtune.sweep {
  op = "rmsnorm_bwd",
  shapes = {{M = 16384, N = 8192}, {M = 65536, N = 8192}},
  families = {
    naive = {params = {nsplit = {32, 64, 128}, partial = {"bf16", "f32"}}},
    persistent = {
      params = {block = {256, 512, 1024}, chunks = normtune.range(1, 4), stages = {1, 2, 3}, k = {0, 1}},
      where = function(p, s) return p.block * p.chunks * 8 == s.N end,
    },
  },
  timing = {warmup = 3, min_samples = 200, max_samples = 200, rel_ci = 0.5},
}
