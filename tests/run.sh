#!/bin/sh
# run.sh -- run every test program and shell test given on the command line,
# then print one line "N passed, N failed".  A program that dies without its
# RESULT line counts as one failure.
passed=0; failed=0
NT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/normtune-test.XXXXXX"); export NT_TMP
for t in "$@"; do
    echo "== $t"
    out=$("$t" 2>&1); rc=$?
    printf '%s\n' "$out"
    res=$(printf '%s\n' "$out" | awk '/^RESULT /{p=$2; f=$3} END{if (p != "") print p, f}')
    if [ -z "$res" ]; then
        echo "FAIL $t: exited $rc without a RESULT line"
        failed=$((failed + 1))
    else
        p=${res% *}; f=${res#* }
        passed=$((passed + p)); failed=$((failed + f))
        if [ "$f" = 0 ] && [ $rc != 0 ]; then
            echo "FAIL $t: exited $rc"; failed=$((failed + 1))
        fi
    fi
done
rm -rf "$NT_TMP"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
