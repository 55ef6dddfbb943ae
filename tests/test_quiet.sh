#!/bin/sh
# test_quiet.sh -- `make test` is quiet unless V=1.  make prints "  CC file"
# instead of the compiler's command line (and nothing per file while make
# test builds); tests/run.sh runs tests side by side but prints one line per
# test file in the order given, the whole output of a failing test (a FAIL
# line, no RESULT line, a non-zero exit, a sanitizer report of its own), and
# everything with V=1; its last line is "N passed, N failed" either way.
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
echo "PASS noisy_two"
echo "progress 3/7" >&2
echo "note: took 2 s"
echo "RESULT 2 0"
EOS
cat >"$T/test_broken.sh" <<'EOS'
#!/bin/sh
echo "why it broke: details"
echo "PASS broken_fine"
echo "FAIL broken_one"
echo "RESULT 1 1"
EOS
cat >"$T/test_dies.sh" <<'EOS'
#!/bin/sh
echo "PASS dies_first"
echo "segfault, say" >&2
exit 139
EOS
# a slow test given first still reports first: lines come in the order given
cat >"$T/test_slow.sh" <<'EOS'
#!/bin/sh
sleep 1
echo "PASS slow_one"
echo "RESULT 1 0"
EOS
chmod +x "$T"/test_*.sh
V= sh "$root/tests/run.sh" "$T/test_noisy.sh" >"$T/quiet" 2>&1; rc=$?
[ $rc = 0 ] && ok run_quiet_exit0 || bad run_quiet_exit0 "exit $rc"
[ "$(wc -l <"$T/quiet")" = 2 ] && grep -q "^ok .*test_noisy.sh *2 passed *0 failed" "$T/quiet" \
    && ok run_quiet_one_line_per_file || bad run_quiet_one_line_per_file "$(cat "$T/quiet")"
grep -q "usage:\|progress\|PASS noisy\|note:" "$T/quiet" && bad run_quiet_hides_noise "$(cat "$T/quiet")" \
    || ok run_quiet_hides_noise
[ "$(tail -n 1 "$T/quiet")" = "2 passed, 0 failed" ] && ok run_quiet_last_line || bad run_quiet_last_line "$(tail -n 1 "$T/quiet")"
V=1 sh "$root/tests/run.sh" "$T/test_noisy.sh" >"$T/loud" 2>&1
grep -q "usage:" "$T/loud" && grep -q "progress" "$T/loud" && grep -q "PASS noisy_one" "$T/loud" \
    && ok run_v1_shows_all || bad run_v1_shows_all "$(cat "$T/loud")"
NT_JOBS=3 V= sh "$root/tests/run.sh" "$T/test_slow.sh" "$T/test_noisy.sh" "$T/test_broken.sh" \
    "$T/test_dies.sh" >"$T/fail" 2>&1; rc=$?
[ $rc != 0 ] && grep -q "why it broke" "$T/fail" && grep -q "FAIL broken_one" "$T/fail" \
    && ok run_failure_shown_whole || bad run_failure_shown_whole "exit $rc: $(cat "$T/fail")"
grep -q "^FAIL .*test_dies.sh.*exited 139 without a RESULT line" "$T/fail" && grep -q "segfault, say" "$T/fail" \
    && ok run_death_counts || bad run_death_counts "$(cat "$T/fail")"
[ "$(grep -E '^(ok|FAIL) ' "$T/fail" | sed 's/^[a-zA-Z]* *\([^ ]*\).*/\1/' | xargs -n1 basename | tr '\n' ' ')" \
    = "test_slow.sh test_noisy.sh test_broken.sh test_dies.sh " ] \
    && ok run_lines_in_order || bad run_lines_in_order "$(cat "$T/fail")"
[ "$(tail -n 1 "$T/fail")" = "4 passed, 2 failed" ] && ok run_fail_last_line || bad run_fail_last_line "$(tail -n 1 "$T/fail")"
NT_JOBS=x sh "$root/tests/run.sh" "$T/test_noisy.sh" >"$T/bad" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "NT_JOBS" "$T/bad" && ok run_bad_jobs || bad run_bad_jobs "exit $rc: $(cat "$T/bad")"

# a sanitizer report (a file appearing in the test's NT_SANLOG) fails that
# test and no other
mkdir -p "$T/san"
cat >"$T/test_san.sh" <<'EOS'
#!/bin/sh
echo "ERROR: LeakSanitizer: detected memory leaks" >"$NT_SANLOG/asan.1"
echo "PASS san_one"; echo "RESULT 1 0"
EOS
chmod +x "$T/test_san.sh"
NT_SANLOG="$T/san" sh "$root/tests/run.sh" "$T/test_noisy.sh" "$T/test_san.sh" >"$T/sanout" 2>&1; rc=$?
[ $rc != 0 ] && grep -q "LeakSanitizer" "$T/sanout" && [ "$(tail -n 1 "$T/sanout")" = "3 passed, 1 failed" ] \
    && grep -q "^ok .*test_noisy.sh" "$T/sanout" && grep -q "^FAIL .*test_san.sh.*sanitizer" "$T/sanout" \
    && ok run_sanitizer_report_fails || bad run_sanitizer_report_fails "exit $rc: $(cat "$T/sanout")"
finish
