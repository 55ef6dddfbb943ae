#!/bin/sh
# test_quiet.sh -- `make test` is quiet unless V=1: make prints "  CC file"
# instead of the compiler's command line, and tests/run.sh shows only the
# PASS/FAIL lines of a passing test (not the help texts and progress lines it
# prints), all of a failing test's output, and everything with V=1; its last
# line is "N passed, N failed" either way.
#
# Needs NT_TMP (a scratch dir); prints PASS/FAIL lines and "RESULT passed failed".
NAME=test_quiet
. "$(dirname "$0")/lib.sh"

# make: a short line by default, the command line with V=1 (a small target
# built into a scratch build folder)
make -s -C "$root" --no-print-directory B="$T/b" "$T/b/embed" >"$T/out" 2>&1
grep -q "^  CC .*/embed$" "$T/out" && ok make_short_line || bad make_short_line "$(head -c 300 "$T/out")"
grep -q -- "-Wall" "$T/out" && bad make_no_command_line "$(head -c 300 "$T/out")" || ok make_no_command_line
rm -rf "$T/b"
make -C "$root" --no-print-directory B="$T/b" V=1 "$T/b/embed" >"$T/out" 2>&1
grep -q -- "-Wall.*embed.c" "$T/out" && ok make_v1_command_line || bad make_v1_command_line "$(head -c 300 "$T/out")"

# run.sh: a passing test that also prints a help text, a failing one
cat >"$T/test_noisy.sh" <<'EOS'
#!/bin/sh
echo "usage: normtune frob [--help]"
echo "PASS noisy_one"
echo "progress 3/7" >&2
echo "note: took 2 s"
echo "RESULT 1 0"
EOS
cat >"$T/test_broken.sh" <<'EOS'
#!/bin/sh
echo "why it broke: details"
echo "FAIL broken_one"
echo "RESULT 0 1"
EOS
chmod +x "$T/test_noisy.sh" "$T/test_broken.sh"
V= sh "$root/tests/run.sh" "$T/test_noisy.sh" >"$T/quiet" 2>&1; rc=$?
[ $rc = 0 ] && ok run_quiet_exit0 || bad run_quiet_exit0 "exit $rc"
grep -q "^PASS noisy_one" "$T/quiet" && grep -q "^note: took" "$T/quiet" && ok run_quiet_keeps_pass \
    || bad run_quiet_keeps_pass "$(cat "$T/quiet")"
grep -q "usage:\|progress" "$T/quiet" && bad run_quiet_hides_noise "$(cat "$T/quiet")" || ok run_quiet_hides_noise
[ "$(tail -n 1 "$T/quiet")" = "1 passed, 0 failed" ] && ok run_quiet_last_line || bad run_quiet_last_line "$(tail -n 1 "$T/quiet")"
V=1 sh "$root/tests/run.sh" "$T/test_noisy.sh" >"$T/loud" 2>&1
grep -q "usage:" "$T/loud" && grep -q "progress" "$T/loud" && ok run_v1_shows_all || bad run_v1_shows_all "$(cat "$T/loud")"
V= sh "$root/tests/run.sh" "$T/test_noisy.sh" "$T/test_broken.sh" >"$T/fail" 2>&1; rc=$?
[ $rc != 0 ] && grep -q "why it broke" "$T/fail" && ok run_failure_shown_whole || bad run_failure_shown_whole "exit $rc: $(cat "$T/fail")"
[ "$(tail -n 1 "$T/fail")" = "1 passed, 1 failed" ] && ok run_fail_last_line || bad run_fail_last_line "$(tail -n 1 "$T/fail")"

# a sanitizer report (a file appearing in NT_SANLOG) fails the test
mkdir -p "$T/san"
cat >"$T/test_san.sh" <<EOS
#!/bin/sh
echo "ERROR: LeakSanitizer: detected memory leaks" >"$T/san/asan.1"
echo "PASS san_one"; echo "RESULT 1 0"
EOS
chmod +x "$T/test_san.sh"
NT_SANLOG="$T/san" sh "$root/tests/run.sh" "$T/test_san.sh" >"$T/sanout" 2>&1; rc=$?
[ $rc != 0 ] && grep -q "LeakSanitizer" "$T/sanout" && [ "$(tail -n 1 "$T/sanout")" = "1 passed, 1 failed" ] \
    && ok run_sanitizer_report_fails || bad run_sanitizer_report_fails "exit $rc: $(cat "$T/sanout")"
finish
