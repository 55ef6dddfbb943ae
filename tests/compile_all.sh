#!/bin/sh
# compile_all.sh -- the CI requirement: every variant of every op's sweeps
# (lua/sweeps/<op>.lua and lua/sweeps/<op>_*.lua for each op folder
# kernels/<op>/, every dtype combination) compiles for sm_90a (`make
# test-compile`, its own CI step), and no variant spills registers, except
# in the ops listed in SPILL_OK, whose families measure spilling configs
# like any other (the others' register rules refuse what would spill), but
# for the families of NOSPILL, which have register rules of their own.
#
# The cache is a fresh $T/cache (cold) unless NORMTUNE_CACHE is already set,
# e.g. to a warm cache.  Needs NORMTUNE (the binary) and NT_TMP (a scratch
# dir); prints PASS/FAIL lines and "RESULT passed failed".
NAME=compile_all
. "$(dirname "$0")/lib.sh"
: "${NORMTUNE_CACHE:=$T/cache}"
export NORMTUNE_CACHE

SPILL_OK="rmsnorm_bwd"
NOSPILL="rmsnorm_bwd.loop rmsnorm_bwd.cstage"
# Kernel sets known to spill in an op that is not in SPILL_OK ("family
# dtypes params", as `compile` prints them): the register rules are fits
# (kernels/<op>/families.c), and a point they accept can still spill a
# little.  `stage` with 256 threads of 7 chunks, k 4, w whole (wg 0), bf16
# (N = 14336, since the default forward took the grid): 4 bytes at the cap
# of 64 registers; a rule that refuses it refuses 18 points that do not
# spill (9 at any margin that does), several of them the best at a shape.
SPILL_KNOWN="rmsnorm_fwd.stage x=bf16,w=bf16 block=256,chunks=7,k=4,wg=0"
scripts=""
for d in "$root"/kernels/*/; do
    op=$(basename "$d")
    [ -f "$root/lua/sweeps/$op.lua" ] || continue
    for f in "$root/lua/sweeps/$op.lua" "$root/lua/sweeps/${op}"_*.lua; do
        [ -f "$f" ] && scripts="$scripts $op:$(basename "$f" .lua)"
    done
done
[ -n "$scripts" ] && ok sweeps_found || bad sweeps_found "no lua/sweeps/<op>.lua for any kernels/<op>/"
for pair in $scripts; do
    op=${pair%%:*}; script=${pair#*:}
    least=100   # kernel sets the default sweep must compile at the least
    [ "$script" != "$op" ] && least=50
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
    # spills (column 6)
    nspill=$(grep "^$op\." "$T/out" | awk -v known="$SPILL_KNOWN" '
        BEGIN { n = split(known, k, "\n"); for (i = 1; i <= n; i++) ok[k[i]] = 1 }
        $4 == "ok" && $6 + 0 > 0 { if (($1 " " $2 " " $3) in ok) print "note: known spill: " $0 > "/dev/stderr"
                                   else print }' | wc -l)
    if ! echo " $SPILL_OK " | grep -q " $op "; then
        [ "$nspill" = 0 ] && ok "${script}_no_variant_spills" ||
            bad "${script}_no_variant_spills" "$nspill spill: $(grep "^$op\." "$T/out" |
                awk '$4 == "ok" && $6 + 0 > 0' | head -3)"
    else
        echo "note: $script sweep: $nspill kernel sets spill"
        for fam in $NOSPILL; do
            grep -q "^$fam " "$T/out" || continue
            n=$(grep "^$fam " "$T/out" | awk '$4 == "ok" && $6 + 0 > 0' | wc -l)
            [ "$n" = 0 ] && ok "${script}_${fam#*.}_no_variant_spills" ||
                bad "${script}_${fam#*.}_no_variant_spills" "$n spill: $(grep "^$fam " "$T/out" |
                    awk '$4 == "ok" && $6 + 0 > 0' | head -3)"
        done
    fi
done

finish
[ $failed = 0 ]
