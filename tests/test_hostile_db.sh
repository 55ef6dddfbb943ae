#!/bin/sh
# test_hostile_db.sh -- databases found by fuzz_store (tests/fuzz/): a
# normtune database whose user_version is negative (SQLite stores it as a
# signed 32-bit number) made every command that opens it index the
# migration table out of bounds and crash.  Each command must now refuse it
# with exit 1 and a message naming the file, and leave it as it was.
#
# Needs NORMTUNE, NT_TMP and the sqlite3 shell (else SKIP); prints PASS/FAIL
# lines and "RESULT passed failed".
NAME=test_hostile_db
. "$(dirname "$0")/lib.sh"
need_sqlite3 "hostile databases"
db=$T/neg.db
sqlite3 "$db" <"$root/db/schema.sql" && sqlite3 "$db" "PRAGMA user_version = -2141192192" \
    && ok fixture || bad fixture
cp "$db" "$T/neg.orig"
for cmd in "query --db $db" "report --db $db" "export --db $db -o $T/out.h" \
           "migrate --db $db" "merge $db $db -o $T/m.db"; do
    name=$(echo "$cmd" | cut -d' ' -f1)
    # shellcheck disable=SC2086
    expect "negative_version_${name}_exit1" 1 $cmd
    has "negative_version_${name}_names_file" "$T/err" "neg.db"
    cmp -s "$db" "$T/neg.orig" && ok "negative_version_${name}_untouched" \
        || bad "negative_version_${name}_untouched"
done
[ ! -e "$T/out.h" ] && [ ! -e "$T/m.db" ] && ok negative_version_nothing_written \
    || bad negative_version_nothing_written
finish
