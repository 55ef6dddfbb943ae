#!/bin/sh
# test_sanitize_script.sh -- tests/gpu/sanitize.sh (make test-gpu's
# compute-sanitizer step) without a GPU: a stand-in compute-sanitizer on
# the PATH answers each run.  Every family `normtune --help` lists gets a
# memcheck and a racecheck line of its own; a run that hangs past
# SANITIZE_TIMEOUT is a FAIL that says so, and one that reports errors a
# FAIL with its summary; the others pass.  A family's runs validate only
# (--check-only); a timing run per tool times the fallbacks alone.  The
# lines keep their fixed order, and a SANITIZE_JOBS that is not a
# positive integer is refused.  SANITIZE_FAMILIES and SANITIZE_TOOLS choose
# the runs (a name that is no family or no tool is refused).  Runs go up to SANITIZE_JOBS at once: in a
# second run the first two memcheck runs each wait for the other to start
# (with a limit of 120 s, so that a loaded machine's slow start is no
# failure).
# Needs NORMTUNE and NT_TMP; prints PASS/FAIL lines and "RESULT passed failed".
NAME=test_sanitize_script
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/bin"
# the stand-in (it notes its arguments): racecheck of rmsnorm_bwd.warp hangs (5 minutes, against a
# limit of 5 s), memcheck of rmsnorm_fwd.rows finds an error, every other
# run is clean and ends at once (5 s is far for it, however loaded the
# machine)
cat >"$T/bin/compute-sanitizer" <<'EOS'
#!/bin/sh
echo "$*" >>"$MARKS/args"
case "$*" in
*racecheck*rmsnorm_bwd.warp*)
    # RELEASE: hangs until the test says (up to 100 s); else 5 minutes
    if [ -n "$RELEASE" ]; then
        i=0; while [ ! -e "$MARKS/release" ] && [ $i -lt 1000 ]; do sleep 0.1; i=$((i + 1)); done
    else
        [ -n "$PAIR" ] || exec sleep 300
    fi ;;
*memcheck*rmsnorm_fwd.rows*)
    [ -n "$PAIR" ] || { echo "========= ERROR SUMMARY: 1 error"; echo "RESULT 1 1"; exit 3; } ;;
*memcheck*rmsnorm_bwd.naive*|*memcheck*rmsnorm_bwd.persistent*)
    # PAIR: each of the two waits (up to 100 s) for the other to have started
    [ -z "$PAIR" ] || {
        me=${*##*family }; me=${me%% *}; touch "$MARKS/$me"
        other=rmsnorm_bwd.naive; [ "$me" = "$other" ] && other=rmsnorm_bwd.persistent
        i=0; while [ ! -e "$MARKS/$other" ] && [ $i -lt 1000 ]; do sleep 0.1; i=$((i + 1)); done
        [ -e "$MARKS/$other" ] || { echo "========= ERROR SUMMARY: ran alone"; exit 3; }
    } ;;
esac
echo "========= ERROR SUMMARY: 0 errors"
echo "RESULT 2 0"
EOS
chmod +x "$T/bin/compute-sanitizer"
mkdir -p "$T/marks"
MARKS=$T/marks PATH="$T/bin:$PATH" SANITIZE_TIMEOUT=5 SANITIZE_JOBS=4 sh "$root/tests/gpu/sanitize.sh" /bin/true >"$T/out" 2>&1
nfam=$("$NORMTUNE" --help | awk '/^ops / { on = 1; next } on && /^   / { sub(/;.*/, ""); n += split($0, a, ",") } END { print n }')
lines=$(grep -c '^\(PASS\|FAIL\) sanitize_' "$T/out")
[ "$nfam" -gt 10 ] && [ "$lines" = $((2 * nfam + 2)) ] && ok a_line_per_tool_and_family ||
    bad a_line_per_tool_and_family "$lines lines for $nfam families (and a timing run per tool)"
# a family's runs validate only; the timing runs time the fallbacks alone
has family_runs_check_only "$T/marks/args" "--tool racecheck --error-exitcode 3 /bin/true --small --check-only --no-fallback --family rmsnorm_fwd.stage"
has timing_run "$T/marks/args" "--tool memcheck --error-exitcode 3 /bin/true --small --family none"
[ "$(grep -c -- '--check-only' "$T/marks/args")" = $((2 * nfam)) ] && ok only_timing_runs_time ||
    bad only_timing_runs_time "$(grep -c -- '--check-only' "$T/marks/args") runs with --check-only"
has timing_line "$T/out" "PASS sanitize_racecheck_timing: ========= ERROR SUMMARY: 0 errors ("
has names_the_family "$T/out" "PASS sanitize_racecheck_rmsnorm_bwd.cstage: ========= ERROR SUMMARY: 0 errors ("
has hang_is_a_failure "$T/out" "FAIL sanitize_racecheck_rmsnorm_bwd.warp: no result within 5 s (hung, or too slow under racecheck)"
has errors_fail "$T/out" "FAIL sanitize_memcheck_rmsnorm_fwd.rows (exit 3): ========= ERROR SUMMARY: 1 error ("
has result_counts "$T/out" "RESULT $((2 * nfam)) 2"
mkdir -p "$T/pair"
MARKS=$T/pair PAIR=1 PATH="$T/bin:$PATH" SANITIZE_TIMEOUT=120 SANITIZE_JOBS=2 sh "$root/tests/gpu/sanitize.sh" /bin/true >"$T/out3" 2>&1
has runs_at_once "$T/out3" "PASS sanitize_memcheck_rmsnorm_bwd.naive: ========= ERROR SUMMARY: 0 errors ("
has runs_at_once_all_pass "$T/out3" "RESULT $((2 * nfam + 2)) 0"
# the lines in the fixed order: every memcheck line before the racecheck ones
order=$(grep -o '^\(PASS\|FAIL\) sanitize_[a-z]*' "$T/out" | awk '{ print $2 }' | uniq | tr '\n' ' ')
[ "$order" = "sanitize_memcheck sanitize_racecheck " ] && ok lines_in_order || bad lines_in_order "$order"
# SIGTERM (a timeout around make test-gpu) while a run hangs: exit 143,
# the scratch folder gone, no run started after it (the hanging run is
# let go once sanitize.sh has exited; the other runs are instant, so one
# started after it would show within the second waited here)
mkdir -p "$T/tmp" "$T/term"
MARKS=$T/term RELEASE=1 TMPDIR=$T/tmp PATH="$T/bin:$PATH" SANITIZE_TIMEOUT=120 SANITIZE_JOBS=1 \
    sh "$root/tests/gpu/sanitize.sh" /bin/true >"$T/out4" 2>&1 &
pid=$!
i=0; while ! grep -q 'racecheck.*rmsnorm_bwd.warp' "$T/term/args" 2>/dev/null && [ $i -lt 600 ]; do
    sleep 0.1; i=$((i + 1)); done
kill -TERM $pid; wait $pid; rc=$?
touch "$T/term/release"; sleep 1
[ $rc = 143 ] && ok term_exit_code || bad term_exit_code "exit $rc"
[ -z "$(ls "$T/tmp")" ] && ok term_removes_scratch || bad term_removes_scratch "$(ls "$T/tmp")"
n=$(grep -c . "$T/term/args")
last=$(tail -n 1 "$T/term/args")
case "$last" in *racecheck*rmsnorm_bwd.warp*) ok term_starts_no_more ;;
*) bad term_starts_no_more "$n runs, the last: $last" ;; esac
# SANITIZE_FAMILIES and SANITIZE_TOOLS: only those runs, in that order
mkdir -p "$T/some"
MARKS=$T/some PATH="$T/bin:$PATH" SANITIZE_TIMEOUT=60 SANITIZE_JOBS=2 \
    SANITIZE_FAMILIES="rmsnorm_bwd.tma timing" SANITIZE_TOOLS="memcheck synccheck" \
    sh "$root/tests/gpu/sanitize.sh" /bin/true >"$T/out5" 2>&1
got=$(grep -o '^\(PASS\|FAIL\) sanitize_[a-z_.]*' "$T/out5" | tr '\n' ' ')
[ "$got" = "PASS sanitize_memcheck_rmsnorm_bwd.tma PASS sanitize_memcheck_timing PASS sanitize_synccheck_rmsnorm_bwd.tma PASS sanitize_synccheck_timing " ] &&
    [ "$(grep -c . "$T/some/args")" = 4 ] && ok families_and_tools_chosen || bad families_and_tools_chosen "$got"
has synccheck_run "$T/some/args" "--tool synccheck --error-exitcode 3 /bin/true --small --check-only --no-fallback --family rmsnorm_bwd.tma"
has families_result "$T/out5" "RESULT 4 0"
SANITIZE_FAMILIES="rmsnorm_bwd.nope" sh "$root/tests/gpu/sanitize.sh" /bin/true >"$T/out6" 2>&1
[ $? = 2 ] && ok unknown_family_refused || bad unknown_family_refused "exit $?"
has unknown_family_says "$T/out6" "SANITIZE_FAMILIES: 'rmsnorm_bwd.nope' is no family normtune --help lists"
SANITIZE_TOOLS="memcheck leakcheck" sh "$root/tests/gpu/sanitize.sh" /bin/true >"$T/out7" 2>&1
[ $? = 2 ] && ok unknown_tool_refused || bad unknown_tool_refused "exit $?"
has unknown_tool_says "$T/out7" "SANITIZE_TOOLS: 'leakcheck' is no compute-sanitizer tool"
SANITIZE_JOBS=x sh "$root/tests/gpu/sanitize.sh" /bin/true >"$T/out2" 2>&1
[ $? = 2 ] && ok bad_jobs_refused || bad bad_jobs_refused "exit $?"
has bad_jobs_says "$T/out2" "SANITIZE_JOBS must be a positive integer, not 'x'"
finish
