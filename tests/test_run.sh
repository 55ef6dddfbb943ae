#!/bin/sh
# test_run.sh -- `normtune run` and the top-level CLI without a GPU: usage
# errors exit 2, --help exits 0, a machine without a GPU gets a plain "no
# GPU" message that names the commands that work without one, and exit 1,
# and no database is created then.  --device means a name or UUID in every
# command; the CUDA ordinal is --gpu.
#
# Needs NORMTUNE and NT_TMP; prints PASS/FAIL lines and "RESULT passed failed".
NAME=test_run
. "$(dirname "$0")/lib.sh"
sweep=$root/lua/sweeps/smoke.lua

expect top_no_args 2
expect top_help 0 --help
grep -q "commands:" "$T/out" && ok top_help_lists_commands || bad top_help_lists_commands
expect top_unknown_command 2 frobnicate
expect run_help 0 run --help
grep -q "usage: normtune run" "$T/out" && ok run_help_text || bad run_help_text
expect run_no_script 2 run
expect run_two_scripts 2 run "$sweep" "$sweep"
expect run_bad_option 2 run --frobnicate "$sweep"
expect run_bad_jobs 2 run --jobs zero "$sweep"
expect run_bad_settle 2 run --settle -3 "$sweep"
grep -q -- "--settle" "$T/err" && ok run_bad_settle_message || bad run_bad_settle_message "$(cat "$T/err")"
"$NORMTUNE" run --help | grep -q -- "--settle S" && ok run_help_settle || bad run_help_settle
expect run_device_ordinal_refused 2 run --device 1 "$sweep"
has run_device_ordinal_points_to_gpu "$T/err" "--gpu 1"
expect run_bad_gpu 2 run --gpu -1 "$sweep"
"$NORMTUNE" run --help | grep -q -- "--gpu N" && ok run_help_gpu || bad run_help_gpu
expect run_missing_script 1 run "$T/nope.lua" --db "$T/r.db"
# --strategy and --budget override the script's search (before any GPU work)
expect run_bad_strategy 2 run --strategy greedy "$sweep"
has run_bad_strategy_names_them "$T/err" "unknown strategy 'greedy' (allowed: exhaustive, random, hillclimb, warm)"
expect run_bad_budget 2 run --budget 0 "$sweep"
"$NORMTUNE" run --help | grep -q -- "--strategy S" && ok run_help_strategy || bad run_help_strategy
expect replay_bad_strategy 2 replay --db "$T/r.db" --strategy greedy "$sweep"
has replay_bad_strategy_names_them "$T/err" "unknown strategy 'greedy' (allowed: exhaustive, random, hillclimb, warm)"
if nvidia-smi >/dev/null 2>&1; then
    echo "SKIP run_no_device (this machine has a GPU)"
else
    expect run_no_device 1 run "$sweep" --db "$T/r.db"
    grep -q "no GPU" "$T/err" && ok run_no_device_message || bad run_no_device_message "$(cat "$T/err")"
    grep -q "insufficient" "$T/err" && bad run_no_device_plain "$(cat "$T/err")" || ok run_no_device_plain
    has run_no_device_says_what_works "$T/err" "'normtune list', 'compile'"
    expect run_device_by_name_no_gpu 1 run "$sweep" --db "$T/r.db" --device "NVIDIA H200"
    has run_device_by_name_no_gpu_message "$T/err" "no GPU"
    [ ! -e "$T/r.db" ] && ok run_no_device_no_db || bad run_no_device_no_db "database created"
fi
for c in list compile run export query report merge migrate; do
    expect "help_$c" 0 $c --help
done
rm -rf "$T"
echo "RESULT $passed $failed"
