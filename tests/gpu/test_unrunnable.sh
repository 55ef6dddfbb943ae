#!/bin/sh
# test_unrunnable.sh -- a shape that cannot be set up on this machine (its
# tensors do not fit in GPU memory) is a stored result with status
# "resources" and a reason, and the sweep goes on to the next shape; a rerun
# reuses it instead of trying again.
NAME=unrunnable
. "$(dirname "$0")/../lib.sh"
NORMTUNE=${NORMTUNE:-build/normtune}
script=$(dirname "$0")/unrunnable.lua
db=$T/u.db

"$NORMTUNE" run "$script" --settle 0 --db "$db" --verbose 2>"$T/a.err"; rc=$?
[ $rc = 0 ] && ok sweep_goes_on || bad sweep_goes_on "exit $rc: $(tail -c 400 "$T/a.err")"
grep -q "M=1073741824 N=16384 .*rmsnorm_bwd.naive .*: resources.*needs .* GB of" "$T/a.err" &&
    ok huge_shape_stored_as_resources || bad huge_shape_stored_as_resources "$(cat "$T/a.err")"
grep -q "M=512 N=2048 .*rmsnorm_bwd.naive .*: ok" "$T/a.err" && ok next_shape_measured ||
    bad next_shape_measured "$(cat "$T/a.err")"
grep -q "M=1024 N=1024 .*rmsnorm_bwd.naive .*: ok" "$T/a.err" && ok first_shape_measured ||
    bad first_shape_measured "$(cat "$T/a.err")"
"$NORMTUNE" run "$script" --settle 0 --db "$db" 2>"$T/b.err"; rc=$?
grep -q "3 variants, 3 already measured, 0 to go" "$T/b.err" && ok rerun_reuses_failure ||
    bad rerun_reuses_failure "exit $rc: $(cat "$T/b.err")"
finish
