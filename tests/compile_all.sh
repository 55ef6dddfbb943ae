#!/bin/sh
# compile_all.sh -- the CI requirement: every variant of the default sweeps
# (lua/sweeps/rmsnorm_bwd.lua and lua/sweeps/rmsnorm_fwd.lua, every dtype
# combination) and of the cluster family's sweep (rmsnorm_fwd_cluster.lua)
# compiles for sm_90a (`make test-compile`, its own CI step), and that no
# forward variant spills registers.
#
# The cache is a fresh $T/cache (cold) unless NORMTUNE_CACHE is already set,
# e.g. to a warm cache.  Needs NORMTUNE (the binary) and NT_TMP (a scratch
# dir); prints PASS/FAIL lines and "RESULT passed failed".
NAME=compile_all
. "$(dirname "$0")/lib.sh"
: "${NORMTUNE_CACHE:=$T/cache}"
export NORMTUNE_CACHE

for script in rmsnorm_bwd rmsnorm_fwd rmsnorm_fwd_cluster; do
    op=${script%_cluster}
    least=100   # kernel sets the script must compile at the least
    [ "$script" = rmsnorm_fwd_cluster ] && least=50
    t0=$(date +%s)
    "$NORMTUNE" compile "$root/lua/sweeps/$script.lua" --arch sm_90a >"$T/out" 2>"$T/err"; rc=$?
    t1=$(date +%s)
    echo "note: $script sweep: $(tail -1 "$T/out") (script wall $((t1 - t0)) s)"
    [ $rc = 0 ] && ok "${script}_sweep_compiles" || bad "${script}_sweep_compiles" "exit $rc: $(head -c 1000 "$T/err")"
    nbad=$(grep "^$op\\." "$T/out" | grep -vc ' ok ')
    nall=$(grep -c "^$op\\." "$T/out")
    [ "$nbad" = 0 ] && [ "$nall" -gt "$least" ] && ok "${script}_every_variant_ok" ||
        bad "${script}_every_variant_ok" "$nbad of $nall not ok"
    grep -q "failed 0" "$T/out" && ok "${script}_summary" || bad "${script}_summary" "$(tail -1 "$T/out")"
    # spills (column 6): the forward's families refuse what would spill
    # (their register rules, kernels/rmsnorm_fwd/families.c), so none of
    # theirs may; the backward measures its spilling configs like any other
    nspill=$(grep "^$op\." "$T/out" | awk '$4 == "ok" && $6 + 0 > 0' | wc -l)
    if [ "$op" = rmsnorm_fwd ]; then
        [ "$nspill" = 0 ] && ok "${script}_no_variant_spills" ||
            bad "${script}_no_variant_spills" "$nspill spill: $(grep "^$op\." "$T/out" |
                awk '$4 == "ok" && $6 + 0 > 0' | head -3)"
    else
        echo "note: $script sweep: $nspill kernel sets spill"
    fi
done

finish
[ $failed = 0 ]
