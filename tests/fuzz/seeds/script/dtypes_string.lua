-- a list field given a string: refused ("dtypes: expected a list, got
-- string"), once a crash in lua_next found by fuzz_script
return normtune.sweep {
  op = "rmsnorm_bwd", dtypes = "bf16",
  shapes = {{M = 77, N = 3072}},
  families = {naive = {params = {nsplit = {64}, partial = {"f32"}}}},
}
