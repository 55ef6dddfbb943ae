#!/bin/sh
# test_interrupt.sh -- Ctrl-C (SIGINT) and kill -9 of a real `normtune run`
# on the GPU, then resume: nothing measured is lost or duplicated.
#
#   1. SIGINT after two results: exit 130, "interrupted" said, the current
#      result finished or dropped (the summary counts what was stored)
#   2. kill -9 after two more results
#   3. the same command again: it skips exactly what was stored and
#      measures the rest; a fourth run has nothing to do
#   4. every shape holds exactly one result per variant
NAME=interrupt
. "$(dirname "$0")/../lib.sh"
NORMTUNE=${NORMTUNE:-build/normtune}
script=$(dirname "$0")/interrupt.lua
db=$T/int.db
total=$("$NORMTUNE" list "$script" | awk '$1 == "total" {print $4}')

# start a sweep, wait for $1 result lines on its stderr (file $2); pid in $pid
start() {
    "$NORMTUNE" run "$script" --settle 0 --db "$db" --verbose 2>"$2" &
    pid=$!
    i=0
    while [ "$(grep -c '^\[' "$2")" -lt "$1" ] && kill -0 $pid 2>/dev/null && [ $i -lt 1200 ]; do
        sleep 0.1; i=$((i + 1))
    done
}
# "normtune run: N variants, K already measured, R to go" -> "K R"
todo() { sed -n 's/.* variants, \([0-9]*\) already measured, \([0-9]*\) to go$/\1 \2/p' "$1"; }

start 2 "$T/a.err"
kill -INT $pid; wait $pid; rc=$?
m1=$(sed -n 's/.*: \([0-9]*\) measured (.*/\1/p' "$T/a.err")
if [ $rc = 130 ] && grep -q "interrupted; every finished result is stored" "$T/a.err"; then
    ok "sigint_exit_130"
else
    bad "sigint_exit_130" "exit $rc: $(tail -c 300 "$T/a.err")"
fi
if [ -n "$m1" ] && [ "$m1" -ge 2 ] && [ "$m1" -lt "$total" ]; then ok "sigint_partway"
else bad "sigint_partway" "measured '$m1' of $total"; fi

start 2 "$T/b.err"
kill -9 $pid; wait $pid 2>/dev/null
set -- $(todo "$T/b.err"); k2=$1
p2=$(grep -c '^\[' "$T/b.err")
if [ -n "$k2" ] && [ "$k2" = "$m1" ]; then ok "resume_after_sigint"
else bad "resume_after_sigint" "second run found ${k2:-?} stored, the first stored $m1"; fi

"$NORMTUNE" run "$script" --settle 0 --db "$db" 2>"$T/c.err"; rc=$?
set -- $(todo "$T/c.err"); k3=$1; r3=$2
# a result is stored before its line is printed: kill -9 can fall in between
if [ $rc = 0 ] && [ -n "$k3" ] && [ "$k3" -ge $((m1 + p2)) ] && [ "$k3" -le $((m1 + p2 + 1)) ] &&
   [ $((k3 + r3)) = "$total" ] && grep -q ": $r3 measured" "$T/c.err"; then
    ok "resume_after_kill9"
else
    bad "resume_after_kill9" "exit $rc; stored before ${k3:-?}, to go ${r3:-?}, printed $m1+$p2, total $total: $(tail -c 300 "$T/c.err")"
fi

"$NORMTUNE" run "$script" --settle 0 --db "$db" 2>"$T/d.err"; rc=$?
set -- $(todo "$T/d.err")
if [ $rc = 0 ] && [ "$1" = "$total" ] && [ "$2" = 0 ]; then ok "nothing_left"
else bad "nothing_left" "exit $rc: $(head -c 300 "$T/d.err")"; fi

n=0
for shape in "N=8192 M=16384" "N=8192 M=65536"; do
    c=$("$NORMTUNE" query --db "$db" shape $shape | awk 'NR > 2 && NF' | wc -l)
    n=$((n + c))
done
if [ "$n" = "$total" ]; then ok "no_duplicates"; else bad "no_duplicates" "$n rows for $total variants"; fi
finish
