#!/bin/sh
# test_make_tune.sh -- `make tune`'s recipe, run with a stand-in for
# normtune (BIN) that records its arguments: the header checked first,
# every default sweep run in turn into DB, the GPU settled before the first
# only, DEVICES and REMEASURE passed to each run (and nothing of them when
# unset), a failing run stopping the recipe, then the export and the report
# of the newest model.  Nothing here needs a GPU.
#
# Needs NT_TMP; prints PASS/FAIL lines and "RESULT passed failed".
NAME=test_make_tune
. "$(dirname "$0")/lib.sh"

stub=$T/stub
cat >"$stub" <<'EOF'
#!/bin/sh
# the stand-in: one line per call, its arguments; exits FAIL_ON's status
# when its first two arguments are "run FAIL_ON"
echo "$*" >>"$STUB_LOG"
[ -n "$FAIL_ON" ] && [ "$1" = run ] && [ "$2" = "$FAIL_ON" ] && exit 1
exit 0
EOF
chmod +x "$stub"

# tune VARS...: make tune with the stand-in, its calls in $T/log
tune() {
    rm -f "$T/log"
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL STUB_LOG="$T/log" FAIL_ON="${FAIL_ON:-}" \
        make --no-print-directory -C "$root" tune NOBUILD=1 BIN="$stub" DB="$T/r.db" SEED= \
        HEADER="$T/h.h" "$@" >"$T/out" 2>&1
}

# the default sweeps: each op folder's lua/sweeps/<op>.lua, then its
# <op>_n8.lua where there is one (README.md)
sweeps=
for d in "$root"/kernels/*/; do
    op=$(basename "$d")
    [ -e "$root/lua/sweeps/$op.lua" ] && sweeps="$sweeps lua/sweeps/$op.lua"
    [ -e "$root/lua/sweeps/${op}_n8.lua" ] && sweeps="$sweeps lua/sweeps/${op}_n8.lua"
done
sweeps=${sweeps# }

if tune; then ok plain_runs; else bad plain_runs "$(tail -n 5 "$T/out")"; fi
want="export --check --db $T/r.db -o $T/h.h"
[ "$(sed -n 1p "$T/log")" = "$want" ] && ok header_checked_first ||
    bad header_checked_first "$(sed -n 1p "$T/log")"
got=$(grep '^run ' "$T/log" | awk '{ print $2 }' | tr '\n' ' ')
[ "$got" = "$sweeps " ] && ok every_sweep_in_turn || bad every_sweep_in_turn "$got"
n=$(echo "$sweeps" | wc -w)
[ "$n" -ge 2 ] && ok two_sweeps_or_more || bad two_sweeps_or_more "$sweeps"
[ "$(grep -c "^run .* --db $T/r.db" "$T/log")" = "$n" ] && ok runs_into_db ||
    bad runs_into_db "$(grep '^run ' "$T/log")"
# the GPU settles once: every run but the first says --settle 0
[ "$(grep '^run ' "$T/log" | sed -n 1p | grep -c -- '--settle')" = 0 ] &&
    [ "$(grep -c '^run .*--settle 0' "$T/log")" = $((n - 1)) ] && ok settles_once ||
    bad settles_once "$(grep '^run ' "$T/log")"
if grep -q -- '--remeasure\|--devices' "$T/log"; then
    bad unset_adds_nothing "$(grep -- '--remeasure\|--devices' "$T/log")"
else
    ok unset_adds_nothing
fi
tail -n 2 "$T/log" >"$T/last"
[ "$(sed -n 1p "$T/last")" = "export --db $T/r.db --newest -o $T/h.h" ] &&
    [ "$(sed -n 2p "$T/last")" = "report --db $T/r.db --newest" ] && ok export_and_report_last ||
    bad export_and_report_last "$(cat "$T/last")"

if tune REMEASURE=alone DEVICES=all; then ok options_run; else bad options_run "$(tail -n 5 "$T/out")"; fi
[ "$(grep -c '^run .* --remeasure alone' "$T/log")" = "$n" ] && ok remeasure_each_run ||
    bad remeasure_each_run "$(grep '^run ' "$T/log")"
[ "$(grep -c '^run .* --devices all' "$T/log")" = "$n" ] && ok devices_each_run ||
    bad devices_each_run "$(grep '^run ' "$T/log")"

# a run that fails stops the recipe: no later sweep, no export
second=$(echo "$sweeps" | awk '{ print $2 }')
if FAIL_ON=$second tune; then
    bad failing_run_fails "make tune exited 0"
else
    ok failing_run_fails
fi
[ "$(grep -c '^run ' "$T/log")" = 2 ] && ! grep -q '^export --db' "$T/log" && ok stops_after_failure ||
    bad stops_after_failure "$(cat "$T/log")"

finish
