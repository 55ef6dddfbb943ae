#!/bin/sh
# run.sh -- run every libFuzzer harness built under BUILD/fuzz/ for SECONDS
# each (make fuzz: BUILD=build-fuzz, SECONDS=$(FUZZ_TIME)); print one
# PASS/FAIL line per harness with its executions, then "N passed, N failed".
#
#   sh tests/fuzz/run.sh BUILD SECONDS
#
# A harness reads its seeds from tests/fuzz/seeds/NAME (plus lua/sweeps/ for
# fuzz_script) and keeps what it finds in BUILD/corpus/NAME, so a later run
# starts from there; tests/fuzz/NAME.dict is its dictionary when present.
# A crash, a sanitizer report, a leak, an input running longer than
# FUZZ_TIMEOUT seconds (default 30) or more than 2 GB fails the harness; the
# input is kept as BUILD/crash/NAME-* and the end of the log is printed
# (the whole log is BUILD/log/NAME.log).  Reproduce with
# BUILD/fuzz/NAME BUILD/crash/NAME-...
B=${1:?usage: run.sh BUILD SECONDS}
secs=${2:?usage: run.sh BUILD SECONDS}
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${FUZZ_TIMEOUT:=30}"
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1; export UBSAN_OPTIONS
passed=0; failed=0
mkdir -p "$B/log" "$B/crash"
for bin in "$B"/fuzz/fuzz_*; do
    [ -x "$bin" ] || continue
    name=$(basename "$bin")
    short=${name#fuzz_}
    mkdir -p "$B/corpus/$name"
    seeds=""
    [ -d "$root/tests/fuzz/seeds/$short" ] && seeds="$root/tests/fuzz/seeds/$short"
    [ "$short" = script ] && seeds="$seeds $root/lua/sweeps"
    dict=""
    [ -f "$root/tests/fuzz/$name.dict" ] && dict="-dict=$root/tests/fuzz/$name.dict"
    log=$B/log/$name.log
    echo "== $name ($secs s)"
    t0=$(date +%s)
    # shellcheck disable=SC2086
    "$bin" -max_total_time="$secs" -print_final_stats=1 -timeout="$FUZZ_TIMEOUT" \
        -rss_limit_mb=2048 -artifact_prefix="$B/crash/$name-" $dict \
        "$B/corpus/$name" $seeds >"$log" 2>&1
    rc=$?
    t1=$(date +%s)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    files=$(ls "$B/corpus/$name" | wc -l)
    if [ $rc = 0 ] && [ -n "$execs" ]; then
        passed=$((passed + 1))
        echo "PASS $name: $execs executions in $((t1 - t0)) s, corpus $files files"
    else
        failed=$((failed + 1))
        tail -40 "$log"
        echo "FAIL $name: exited $rc after $((t1 - t0)) s; log $log; inputs: $(ls "$B/crash/" | grep "^$name-" | tr '\n' ' ')"
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
