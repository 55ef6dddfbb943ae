local t = setmetatable({}, {__gc = function() end})
local s = string.rep("ab", 10) .. tostring(math.maxinteger)
return normtune.sweep {
  op = "rmsnorm_bwd", dtype = "bf16",
  shapes = {{M = 1, N = 1}},
  families = {naive = {params = {nsplit = {1}, partial = {s}}, where = function() return nil end}},
}
