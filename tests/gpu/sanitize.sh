#!/bin/sh
# sanitize.sh -- compute-sanitizer memcheck and racecheck over the small-shape
# GPU kernel tests (every family).  Prints PASS/FAIL lines and RESULT.
bin=${1:-build/gpu/test_kernels}
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
p=0; f=0
for tool in memcheck racecheck; do
    out=$("$san" --tool $tool --error-exitcode 3 "$bin" --small 2>&1); rc=$?
    summary=$(printf '%s\n' "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
    if [ $rc = 0 ] && printf '%s\n' "$out" | grep -q "^RESULT [0-9]* 0$"; then
        echo "PASS sanitize_$tool: $summary"; p=$((p + 1))
    else
        printf '%s\n' "$out" | tail -30
        echo "FAIL sanitize_$tool (exit $rc): $summary"; f=$((f + 1))
    fi
done
echo "RESULT $p $f"
