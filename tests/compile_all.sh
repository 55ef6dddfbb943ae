#!/bin/sh
# compile_all.sh -- the CI requirement: every variant of the default sweep
# lua/sweeps/rmsnorm_bwd.lua compiles for sm_90a (`make test-compile`, its
# own CI step: about 35 s on 2 cores with a cold cache).
#
# The cache is a fresh $T/cache (cold) unless NORMTUNE_CACHE is already set,
# e.g. to a warm cache.  Needs NORMTUNE (the binary) and NT_TMP (a scratch
# dir); prints PASS/FAIL lines and "RESULT passed failed".
NAME=compile_all
. "$(dirname "$0")/lib.sh"
: "${NORMTUNE_CACHE:=$T/cache}"
export NORMTUNE_CACHE

# the CI requirement: the whole default sweep compiles
t0=$(date +%s)
"$NORMTUNE" compile "$root/lua/sweeps/rmsnorm_bwd.lua" --arch sm_90a >"$T/out" 2>"$T/err"; rc=$?
t1=$(date +%s)
echo "note: default sweep: $(tail -1 "$T/out") (script wall $((t1 - t0)) s)"
[ $rc = 0 ] && ok default_sweep_compiles || bad default_sweep_compiles "exit $rc: $(head -c 1000 "$T/err")"
nbad=$(grep '^rmsnorm_bwd\.' "$T/out" | grep -vc ' ok ')
nall=$(grep -c '^rmsnorm_bwd\.' "$T/out")
[ "$nbad" = 0 ] && [ "$nall" -gt 100 ] && ok default_every_variant_ok || bad default_every_variant_ok "$nbad of $nall not ok"
grep -q "failed 0" "$T/out" && ok default_summary || bad default_summary "$(tail -1 "$T/out")"

finish
[ $failed = 0 ]
