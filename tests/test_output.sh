#!/bin/sh
# test_output.sh -- outputs cannot hurt results: `export -o` refuses an
# SQLite database and the --db file itself (or its -wal/-shm companions),
# whatever path spells it, before reading anything; `export --check` (run by
# make tune before the sweep) refuses the same without a database; a failed
# export leaves the old header as it was; `make tune HEADER=results.db`
# stops before any GPU work.
#
# Needs NORMTUNE and NT_TMP; prints PASS/FAIL lines and "RESULT passed failed".
NAME=test_output
. "$(dirname "$0")/lib.sh"
db=$T/r.db
cp "$root/data/results.db" "$db"
"$NORMTUNE" migrate --db "$db" >/dev/null 2>&1   # the shipped file may be an older schema
sum() { cksum < "$1"; }
before=$(sum "$db")

expect export_onto_db 1 export --db "$db" -o "$db"
has export_onto_db_message "$T/err" "is an SQLite database"
[ "$(sum "$db")" = "$before" ] && ok export_onto_db_kept || bad export_onto_db_kept "results.db changed"
expect export_onto_db_other_spelling 1 export --db "$db" -o "$T/../$(basename "$T")/r.db"
expect export_onto_wal 1 export --db "$db" -o "$db-wal"
has export_onto_wal_message "$T/err" "is the database"
[ ! -e "$db-wal" ] && ok export_onto_wal_nothing_written || bad export_onto_wal_nothing_written
cp "$db" "$T/other.db"
expect export_onto_other_db 1 export --db "$db" -o "$T/other.db"
cmp -s "$db" "$T/other.db" && ok export_onto_other_db_kept || bad export_onto_other_db_kept
expect export_onto_dir 1 export --db "$db" -o "$T"
expect export_ok 0 export --db "$db" -o "$T/h.h"
has export_ok_header "$T/h.h" "NORMTUNE_DISPATCH_VERSION 5"
ls "$T" | grep -q '\.tmp\.' && bad export_no_temporaries "$(ls "$T")" || ok export_no_temporaries
# a failing export (unknown device) keeps the old header
cp "$T/h.h" "$T/h.before"
expect export_fail_keeps_header 1 export --db "$db" --device "NVIDIA B200" -o "$T/h.h"
cmp -s "$T/h.h" "$T/h.before" && ok export_fail_header_untouched || bad export_fail_header_untouched
# --check: no database needed, the same refusals
expect check_new_db 0 export --check --db "$T/new.db" -o "$T/new.h"
[ ! -e "$T/new.db" ] && [ ! -e "$T/new.h" ] && ok check_creates_nothing || bad check_creates_nothing
expect check_same_as_new_db 1 export --check --db "$T/new.db" -o "$T/./new.db"
expect check_existing_db 1 export --check --db "$T/new.db" -o "$db"
# make tune with the header pointing at a database stops before the sweep
if command -v make >/dev/null 2>&1; then
    make -s -C "$root" tune NOBUILD=1 BIN="$NORMTUNE" DB="$T/t.db" HEADER="$db" \
        SWEEP="$root/lua/sweeps/smoke.lua" >"$T/out" 2>"$T/err"; rc=$?
    [ "$rc" != 0 ] && ok tune_header_is_db_fails || bad tune_header_is_db_fails "exit 0"
    has tune_header_is_db_message "$T/err" "is an SQLite database"
    [ ! -e "$T/t.db" ] && ok tune_header_is_db_before_run || bad tune_header_is_db_before_run "sweep started"
    [ "$(sum "$db")" = "$before" ] && ok tune_header_is_db_kept || bad tune_header_is_db_kept
fi
finish
