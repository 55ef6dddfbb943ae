#!/bin/sh
# compile_all.sh -- the CI requirement: every variant of the default sweeps
# (lua/sweeps/rmsnorm_bwd.lua and lua/sweeps/rmsnorm_fwd.lua, every dtype
# combination) compiles for sm_90a (`make test-compile`, its own CI step).
#
# The cache is a fresh $T/cache (cold) unless NORMTUNE_CACHE is already set,
# e.g. to a warm cache.  Needs NORMTUNE (the binary) and NT_TMP (a scratch
# dir); prints PASS/FAIL lines and "RESULT passed failed".
NAME=compile_all
. "$(dirname "$0")/lib.sh"
: "${NORMTUNE_CACHE:=$T/cache}"
export NORMTUNE_CACHE

for op in rmsnorm_bwd rmsnorm_fwd; do
    t0=$(date +%s)
    "$NORMTUNE" compile "$root/lua/sweeps/$op.lua" --arch sm_90a >"$T/out" 2>"$T/err"; rc=$?
    t1=$(date +%s)
    echo "note: $op sweep: $(tail -1 "$T/out") (script wall $((t1 - t0)) s)"
    [ $rc = 0 ] && ok "${op}_sweep_compiles" || bad "${op}_sweep_compiles" "exit $rc: $(head -c 1000 "$T/err")"
    nbad=$(grep "^$op\\." "$T/out" | grep -vc ' ok ')
    nall=$(grep -c "^$op\\." "$T/out")
    [ "$nbad" = 0 ] && [ "$nall" -gt 100 ] && ok "${op}_every_variant_ok" ||
        bad "${op}_every_variant_ok" "$nbad of $nall not ok"
    grep -q "failed 0" "$T/out" && ok "${op}_summary" || bad "${op}_summary" "$(tail -1 "$T/out")"
done

finish
[ $failed = 0 ]
