-- scratch: persistent at rows past 16384 beside cluster, same run
local SIZE = {bf16 = 2, f16 = 2, f32 = 4}
local function E(s) return 16 // SIZE[s.dtype.x] end
local function smem(p, s)
  if p.stages == 1 then return 0 end
  return (32 * p.stages + E(s) * SIZE[s.dtype.w]) * p.block * p.chunks
end
local blocks = {}
for b = 256, 1024, 64 do blocks[#blocks + 1] = b end
return normtune.sweep {
  op = "rmsnorm_bwd",
  dtypes = {"bf16"},
  shapes = normtune.grid({18432, 20480, 24576}, {1024, 4096, 16384}),
  families = {
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
      params = {block = blocks, chunks = normtune.range(1, 16), stages = {1, 2, 3}, k = {0, 1}},
      where = function(p, s)
        local cols = p.block * p.chunks * E(s)
        if cols < s.N or cols - s.N >= p.block * E(s) then return false end
        if p.chunks * E(s) > 64 then return false end
        if smem(p, s) > 227 * 1024 - 1024 then return false end
        if p.stages == 1 and p.chunks > 4 then return false end
        return true
      end,
    },
  },
  timing = {warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01},
  eps = 1e-6,
}
