-- bench_fwd.lua -- the shipped header's config at each forward shape of make bench with a bf16 weight (data/bench-h200/run4/), for the yardstick measurement of data/yardstick-h200/
return normtune.sweep {
  op = "rmsnorm_fwd",
  shapes = {{M = 1024, N = 4096}, {M = 1024, N = 65536}, {M = 4096, N = 4096}, {M = 4096, N = 16384}, {M = 4096, N = 20480}, {M = 4096, N = 32768}, {M = 8192, N = 768}, {M = 8192, N = 16384}, {M = 16384, N = 1024}, {M = 16384, N = 4096}, {M = 16384, N = 8192}, {M = 16384, N = 18432}, {M = 32768, N = 512}, {M = 32768, N = 4096}, {M = 65536, N = 256}, {M = 65536, N = 2048}, {M = 65536, N = 16384}, {M = 131072, N = 64}, {M = 262144, N = 128}, {M = 1048576, N = 128}},
  families = {
    rows = {params = {block = {128, 256}, chunks = {1, 2}, rows = {2}, k = {0, 2, 4}},
      where = function(p, s) local keys = {["16384:4096:block=256,chunks=2,rows=2,k=4"] = true, ["4096:4096:block=256,chunks=2,rows=2,k=2"] = true, ["16384:1024:block=128,chunks=1,rows=2,k=0"] = true}; return keys[s.M .. ":" .. s.N .. ":" .. "block=" .. p.block .. "," .. "chunks=" .. p.chunks .. "," .. "rows=" .. p.rows .. "," .. "k=" .. p.k] ~= nil end},
    stage = {params = {block = {256, 512}, chunks = {2, 4, 5, 9, 16}, k = {0, 2, 4}, wg = {0, 2}},
      where = function(p, s) local keys = {["16384:8192:block=512,chunks=2,k=4,wg=2"] = true, ["8192:16384:block=512,chunks=4,k=0,wg=0"] = true, ["4096:16384:block=512,chunks=4,k=2,wg=0"] = true, ["16384:18432:block=256,chunks=9,k=0,wg=0"] = true, ["4096:20480:block=512,chunks=5,k=0,wg=0"] = true, ["4096:32768:block=256,chunks=16,k=2,wg=0"] = true, ["1024:65536:block=512,chunks=16,k=0,wg=0"] = true}; return keys[s.M .. ":" .. s.N .. ":" .. "block=" .. p.block .. "," .. "chunks=" .. p.chunks .. "," .. "k=" .. p.k .. "," .. "wg=" .. p.wg] ~= nil end},
    row = {params = {block = {32, 64, 128, 256}, chunks = {4, 8, 16}, k = {0, 8}},
      where = function(p, s) local keys = {["32768:4096:block=32,chunks=16,k=0"] = true, ["65536:2048:block=64,chunks=4,k=0"] = true, ["65536:16384:block=256,chunks=8,k=0"] = true, ["1024:4096:block=128,chunks=4,k=8"] = true}; return keys[s.M .. ":" .. s.N .. ":" .. "block=" .. p.block .. "," .. "chunks=" .. p.chunks .. "," .. "k=" .. p.k] ~= nil end},
    warp = {params = {tpr = {4, 8, 16, 32}, block = {128, 256, 512}, chunks = {2, 3}, k = {0}},
      where = function(p, s) local keys = {["1048576:128:tpr=8,block=512,chunks=2,k=0"] = true, ["262144:128:tpr=8,block=512,chunks=2,k=0"] = true, ["131072:64:tpr=4,block=128,chunks=2,k=0"] = true, ["65536:256:tpr=16,block=512,chunks=2,k=0"] = true, ["32768:512:tpr=32,block=512,chunks=2,k=0"] = true, ["8192:768:tpr=32,block=256,chunks=3,k=0"] = true}; return keys[s.M .. ":" .. s.N .. ":" .. "tpr=" .. p.tpr .. "," .. "block=" .. p.block .. "," .. "chunks=" .. p.chunks .. "," .. "k=" .. p.k] ~= nil end},
  },
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
}
