#!/bin/sh
# test_options.sh -- one option parser for every command (tuner/cli.c,
# nt_parse_opts): for each command, -h and --help print its usage on stdout
# (exit 0); an unknown option is one line "normtune CMD: unknown option
# '--bogus' (see normtune CMD --help)", exit 2; an option given no value is
# one line "normtune CMD: option --x needs a value", exit 2; a value of the
# wrong kind and a long name abbreviated to a unique prefix behave alike in
# every command.  Nothing here needs a GPU or a database.
#
# Needs NORMTUNE and NT_TMP; prints PASS/FAIL lines and "RESULT passed failed".
NAME=test_options
. "$(dirname "$0")/lib.sh"

# the stderr of the last expect is exactly one line, $2
line_is() {
    if [ "$(wc -l <"$T/err")" = 1 ] && [ "$(cat "$T/err")" = "$2" ]; then ok "$1"
    else bad "$1" "want '$2', got: $(head -c 300 "$T/err")"; fi
}

for c in list compile run export query report plot merge migrate; do
    for h in -h --help; do
        expect "${c}_help$h" 0 "$c" "$h"
        has "${c}_usage$h" "$T/out" "usage: normtune $c"
    done
    expect "${c}_unknown" 2 "$c" --bogus
    line_is "${c}_unknown_message" "normtune $c: unknown option '--bogus' (see normtune $c --help)"
done

# an option that takes a value, given last with none
for cv in "compile --arch" "run --db" "export --db" "query --db" "report --db" "plot --db" \
          "merge -o" "migrate --db"; do
    set -- $cv
    expect "$1_needs_value" 2 "$1" "$2"
    line_is "$1_needs_value_message" "normtune $1: option $2 needs a value"
done

# an option a command does not take is unknown under its own name, not its value's
expect migrate_other_option 2 migrate --output x
line_is migrate_other_option_message \
    "normtune migrate: unknown option '--output' (see normtune migrate --help)"

# positive integers: the same message in compile and run
for c in compile run; do
    expect "${c}_jobs_zero" 2 "$c" "$root/lua/sweeps/rmsnorm_bwd.lua" --jobs 0
    line_is "${c}_jobs_zero_message" "normtune $c: --jobs needs a positive integer, got '0'"
done

# run --remeasure: chain or alone, and only for a strategy that re-measures
expect run_remeasure_bad 2 run "$root/lua/sweeps/rmsnorm_bwd.lua" --remeasure fast
line_is run_remeasure_bad_message "normtune run: unknown --remeasure 'fast' (allowed: chain, alone)"
expect run_remeasure_random 2 run "$root/lua/sweeps/rmsnorm_bwd.lua" --remeasure alone \
    --strategy random --db "$T/none.db"
line_is run_remeasure_random_message \
    "normtune run: --remeasure is a step of strategies warm and exhaustive, not of random"
[ ! -e "$T/none.db" ] && ok run_remeasure_random_no_db || bad run_remeasure_random_no_db

# --NAME=VALUE and an unambiguous prefix are GNU's, in every command
expect export_eq_prefix 1 export --dev=x --db="$T/none.db" -o "$T/x.h"
has export_eq_prefix_reads_db "$T/err" "none.db"
expect query_ambiguous 2 query --d x
line_is query_ambiguous_message "normtune query: unknown option '--d' (see normtune query --help)"

finish
