#!/bin/sh
# run.sh -- run every test program and shell test given on the command line,
# up to NT_JOBS of them at once (default: the number of CPUs), then print one
# line "N passed, N failed".  A test is a program that prints PASS/FAIL lines
# and ends with "RESULT passed failed"; one that dies without its RESULT line
# counts as one failure, and so does one that fails no check but exits
# non-zero.
#
# Quiet unless V=1: one line per test file, in the order given, as each
# finishes ("ok   tests/test_db.sh  41 passed  0 failed  2.3 s"); a test that fails (a
# FAIL line, no RESULT line, a non-zero exit) gets its whole output printed
# after its line.  V=1 prints every test's whole output.
#
# Each test runs with its own output file, so tests running side by side do
# not mix their lines.  NT_SANLOG, when set, is the folder where sanitizers
# write their reports (make test-asan): each test gets a folder of its own
# under it (NT_SANLOG and the sanitizers' log_path point there while it
# runs), and a report found there counts as one more failure of that test.
jobs=${NT_JOBS:-$(nproc 2>/dev/null || echo 2)}
case "$jobs" in ''|*[!0-9]*|0) echo "run.sh: NT_JOBS must be a positive integer, not '$jobs'" >&2; exit 2 ;; esac
NT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/normtune-test.XXXXXX"); export NT_TMP
R=$NT_TMP/run            # R/i.out, R/i.rc, R/i.t: output, exit code, seconds of test i
mkdir -p "$R"
san_root=$NT_SANLOG

# now: seconds since the epoch, with two decimals where date can give them
now() { date +%s.%N 2>/dev/null | cut -c1-13; }

# Start test number $1 ($2) in the background.
start() {
    (
        if [ -n "$san_root" ]; then
            NT_SANLOG=$san_root/t$1; mkdir -p "$NT_SANLOG"; export NT_SANLOG
            # a later log_path in the options overrides the one make gave
            ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$NT_SANLOG/asan"
            UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=$NT_SANLOG/ubsan"
            export ASAN_OPTIONS UBSAN_OPTIONS
        fi
        t0=$(now)
        "$2" >"$R/$1.out" 2>&1; rc=$?
        t1=$(now)
        awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }' >"$R/$1.t"
        echo "$rc" >"$R/$1.rc.tmp" && mv "$R/$1.rc.tmp" "$R/$1.rc"
    ) &
}

# Print test number $1's line (and its output when it failed or V=1); add
# its counts to passed and failed.
report() {
    t=$2; out=$R/$1.out; rc=$(cat "$R/$1.rc"); secs=$(cat "$R/$1.t")
    res=$(awk '/^RESULT /{p=$2; f=$3} END{if (p != "") print p, f}' "$out")
    why=""
    if [ -z "$res" ]; then
        p=0; f=1; why="exited $rc without a RESULT line"
    else
        p=${res% *}; f=${res#* }
        [ "$f" = 0 ] && [ "$rc" != 0 ] && { f=1; why="exited $rc"; }
    fi
    san=""
    # reports are files (a test that runs run.sh itself leaves empty folders)
    if [ -n "$san_root" ] && [ -n "$(find "$san_root/t$1" -type f 2>/dev/null)" ]; then
        san=$(find "$san_root/t$1" -type f | while read -r s; do echo "--- $s"; cat "$s"; done)
        f=$((f + 1)); why="${why:+$why; }a sanitizer report (below; kept in $san_root/t$1)"
    fi
    passed=$((passed + p)); failed=$((failed + f))
    if [ "$f" = 0 ]; then v=ok; else v=FAIL; fi
    printf '%-4s %-36s %4s passed %2s failed %6s s%s\n' "$v" "$t" "$p" "$f" "$secs" "${why:+: $why}"
    if [ "$V" = 1 ] || [ "$f" != 0 ]; then
        sed 's/^/    /' "$out"
        [ -n "$san" ] && printf '%s\n' "$san" | sed 's/^/    /'
    fi
}

passed=0; failed=0
total=$#
next=1                   # the next test to start
shown=1                  # the next test to report
running=0
while [ "$shown" -le "$total" ]; do
    while [ "$running" -lt "$jobs" ] && [ "$next" -le "$total" ]; do
        eval "t=\${$next}"
        start "$next" "$t"
        next=$((next + 1)); running=$((running + 1))
    done
    # report, in order, every test that has finished
    progressed=0
    while [ "$shown" -lt "$next" ] && [ -f "$R/$shown.rc" ]; do
        eval "t=\${$shown}"
        report "$shown" "$t"
        shown=$((shown + 1)); progressed=1
    done
    # count what is still running (finished but not yet reported ones too)
    running=0; i=$shown
    while [ "$i" -lt "$next" ]; do
        [ -f "$R/$i.rc" ] || running=$((running + 1))
        i=$((i + 1))
    done
    [ "$progressed" = 1 ] || sleep 0.2
done
wait
rm -rf "$NT_TMP"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
