-- scratch: the pipelined cluster family beside cluster and persistent at
-- rows past 16384, one exhaustive run
local SIZE = {bf16 = 2, f16 = 2, f32 = 4}
local function E(s) return 16 // SIZE[s.dtype.x] end
local function smem(p, s)
  return (32 * p.stages + E(s) * SIZE[s.dtype.w]) * p.block * p.chunks
end
return normtune.sweep {
  op = "rmsnorm_bwd",
  dtypes = {"bf16"},
  shapes = normtune.grid({18432, 24576, 32768, 65536}, {1024, 4096, 16384}),
  families = {
    cstage = {
      params = {cluster = {2, 4, 8}, block = {128, 256, 512, 1024}, chunks = normtune.range(1, 8),
                stages = {2, 3, 4}, k = {0, 1, 2}},
      where = function(p, s)
        local T = p.cluster * p.block
        local cols = T * p.chunks * E(s)
        if cols < s.N or cols - s.N >= T * E(s) then return false end
        local b = smem(p, s)
        if b > 227 * 1024 - 1024 then return false end
        if p.k > 0 and p.k * (b + 1024) > 228 * 1024 then return false end
        return true
      end,
    },
    cluster = {
      params = {cluster = {2, 4, 8}, block = {64, 128, 256, 512, 1024},
                chunks = normtune.range(1, 16), k = {0, 1, 2, 4}},
      where = function(p, s)
        local T = p.cluster * p.block
        local cols = T * p.chunks * E(s)
        return cols >= s.N and cols - s.N < T * E(s)
      end,
    },
    persistent = {
      params = {block = {256, 512, 1024}, chunks = normtune.range(1, 8), stages = {2, 3}, k = {0, 1}},
      where = function(p, s)
        local cols = p.block * p.chunks * E(s)
        if cols < s.N or cols - s.N >= p.block * E(s) then return false end
        return smem(p, s) <= 227 * 1024 - 1024
      end,
    },
  },
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
