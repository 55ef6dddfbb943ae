#!/bin/sh
# sanitize.sh -- compute-sanitizer memcheck and racecheck over the small-shape
# GPU kernel tests, one run per tool and family (`test_kernels --small
# --family OP.FAMILY`, which adds each op's fallback), so that every family
# gets its own PASS or FAIL line.  A run that gives no result within
# SANITIZE_TIMEOUT seconds (600) is a FAIL that says so, rather than a
# test-gpu that never ends.  The families are those `normtune --help` lists
# (NORMTUNE, else build/normtune); where it cannot say, one run covers them
# all.  Prints PASS/FAIL lines and RESULT.
bin=${1:-build/gpu/test_kernels}
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
limit=${SANITIZE_TIMEOUT:-600}
fams=$("${NORMTUNE:-build/normtune}" --help 2>/dev/null | awk '
    /^ops / { on = 1; next }
    on && /^  [a-z]/ { op = $1; next }
    on && /^   / { sub(/;.*/, ""); gsub(/,/, ""); for (i = 1; i <= NF; i++) print op "." $i }')
[ -n "$fams" ] || fams=all
p=0; f=0
for tool in memcheck racecheck; do
    for fam in $fams; do
        if [ "$fam" = all ]; then name=$tool; set --; else name=${tool}_$fam; set -- --family "$fam"; fi
        out=$(timeout "$limit" "$san" --tool $tool --error-exitcode 3 "$bin" --small "$@" 2>&1); rc=$?
        summary=$(printf '%s\n' "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
        if [ $rc = 0 ] && printf '%s\n' "$out" | grep -q "^RESULT [0-9]* 0$"; then
            echo "PASS sanitize_$name: $summary"; p=$((p + 1))
        elif [ $rc = 124 ]; then
            printf '%s\n' "$out" | tail -10
            echo "FAIL sanitize_$name: no result within $limit s (hung, or too slow under $tool)"
            f=$((f + 1))
        else
            printf '%s\n' "$out" | tail -30
            echo "FAIL sanitize_$name (exit $rc): $summary"; f=$((f + 1))
        fi
    done
done
echo "RESULT $p $f"
