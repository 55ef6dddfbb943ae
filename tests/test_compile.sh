#!/bin/sh
# test_compile.sh -- `normtune compile`: usage errors, a small script (miss,
# then all hits) and --no-cache.  The CI requirement that every variant of
# the default sweep compiles is tests/compile_all.sh (make test-compile).
#
# The cache is $T/cache unless NORMTUNE_CACHE is already set.
# Needs NORMTUNE (the binary) and NT_TMP (a scratch dir); prints PASS/FAIL
# lines and "RESULT passed failed".
NAME=test_compile
. "$(dirname "$0")/lib.sh"
: "${NORMTUNE_CACHE:=$T/cache}"
export NORMTUNE_CACHE

expect help 0 compile --help
grep -q "usage: normtune compile" "$T/out" && ok help_text || bad help_text
expect no_script 2 compile --arch sm_90a
expect no_arch 2 compile "$root/lua/sweeps/rmsnorm_bwd.lua"
expect bad_arch 2 compile "$root/lua/sweeps/rmsnorm_bwd.lua" --arch compute_90
expect bad_option 2 compile "$root/lua/sweeps/rmsnorm_bwd.lua" --arch sm_90a --frobnicate
expect bad_jobs 2 compile "$root/lua/sweeps/rmsnorm_bwd.lua" --arch sm_90a --jobs 0
expect two_scripts 2 compile a.lua b.lua --arch sm_90a
[ "$(wc -l <"$T/err")" = 1 ] && ok usage_one_line || bad usage_one_line "$(cat "$T/err")"
expect missing_script 1 compile "$T/nope.lua" --arch sm_90a

cat >"$T/small.lua" <<'EOF'
return normtune.sweep {
  op = "rmsnorm_bwd", dtype = "bf16",
  shapes = {{M = 1024, N = 4096}, {M = 4096, N = 4096}},
  families = {
    persistent = {params = {block = {256}, chunks = {2}, stages = {1, 2}, k = {0}}},
    naive = {params = {nsplit = {32, 64}, partial = {"f32"}}},
  },
}
EOF
SMALL_CACHE="$T/small-cache"
NORMTUNE_CACHE=$SMALL_CACHE "$NORMTUNE" compile "$T/small.lua" --arch sm_90a -j 2 >"$T/out" 2>"$T/err"; rc=$?
[ $rc = 0 ] && ok small_exit0 || bad small_exit0 "exit $rc: $(head -c 500 "$T/err")"
# 4 variants (2 naive params share one kernel set): 3 compiled, all ok
n=$(grep -c '^rmsnorm_bwd\.[a-z]* .* ok ' "$T/out")
[ "$n" = 4 ] && ok small_lines || bad small_lines "$n ok lines"
grep -q "variants 4, ok 4, failed 0, compiled kernel sets 3, cache hits 0" "$T/out" && ok small_summary_cold \
    || bad small_summary_cold "$(tail -1 "$T/out")"
NORMTUNE_CACHE=$SMALL_CACHE "$NORMTUNE" compile "$T/small.lua" --arch sm_90a >"$T/out" 2>"$T/err"
grep -q "cache hits 3" "$T/out" && ok small_warm_hits || bad small_warm_hits "$(tail -1 "$T/out")"
NORMTUNE_CACHE="$T/unused-cache" "$NORMTUNE" compile "$T/small.lua" --arch sm_90a --no-cache >"$T/out" 2>&1; rc=$?
[ $rc = 0 ] && [ ! -e "$T/unused-cache" ] && grep -q "cache hits 0" "$T/out" && ok no_cache \
    || bad no_cache "exit $rc"

rm -rf "$T"
echo "RESULT $passed $failed"
[ $failed = 0 ]
