#!/bin/sh
# run.sh -- run every test program and shell test given on the command line,
# then print one line "N passed, N failed".  A program that dies without its
# RESULT line counts as one failure.
#
# Quiet unless V=1: of a test's output only its PASS/FAIL/SKIP lines, failed
# checks and lines starting "note: " are shown; a test that fails (a FAIL line, no RESULT line, or a
# non-zero exit) gets its whole output printed instead.  V=1 prints
# every test's whole output.
#
# NT_SANLOG, when set, is the folder where sanitizers write their reports
# (make test-asan): a report that appears while a test runs is printed and
# counts as one more failure of that test.
passed=0; failed=0
NT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/normtune-test.XXXXXX"); export NT_TMP
for t in "$@"; do
    echo "== $t"
    out=$("$t" 2>&1); rc=$?
    res=$(printf '%s\n' "$out" | awk '/^RESULT /{p=$2; f=$3} END{if (p != "") print p, f}')
    verdict=""
    if [ -z "$res" ]; then
        verdict="FAIL $t: exited $rc without a RESULT line"
        failed=$((failed + 1))
    else
        p=${res% *}; f=${res#* }
        passed=$((passed + p)); failed=$((failed + f))
        if [ "$f" = 0 ] && [ $rc != 0 ]; then
            verdict="FAIL $t: exited $rc"; failed=$((failed + 1))
        fi
    fi
    san=""
    if [ -n "$NT_SANLOG" ] && [ -n "$(ls -A "$NT_SANLOG" 2>/dev/null)" ]; then
        san=$(for f in "$NT_SANLOG"/*; do echo "--- $f"; cat "$f"; done)
        mkdir -p "$NT_SANLOG.seen" && mv "$NT_SANLOG"/* "$NT_SANLOG.seen/"
    fi
    if [ "$V" = 1 ] || [ -n "$verdict" ] || { [ -n "$res" ] && [ "${res#* }" != 0 ]; }; then
        printf '%s\n' "$out"
    else
        printf '%s\n' "$out" | grep -E '^(PASS|FAIL|SKIP|note:) |check failed' || true
    fi
    [ -n "$verdict" ] && echo "$verdict"
    if [ -n "$san" ]; then
        printf '%s\n' "$san"
        echo "FAIL $t: sanitizer report (above; kept in $NT_SANLOG.seen)"
        failed=$((failed + 1))
    fi
done
rm -rf "$NT_TMP"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
