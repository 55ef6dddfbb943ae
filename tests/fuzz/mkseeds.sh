#!/bin/sh
# mkseeds.sh -- rebuild the database seeds of fuzz_store from the schema and
# tests/fuzz/seeds/store/fixture.sql with the sqlite3 shell: fixture.db (the
# current schema, 512-byte pages to keep it small, rollback journal) and
# fixture-v1.db (the same rows in schema version 1, which STORE_WRITE
# migrates).  Run from anywhere; the files are committed.
set -e
d=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$d/../.." && pwd)
cd "$d/seeds/store"
rm -f fixture.db fixture-v1.db
{ echo "PRAGMA page_size = 512;"; cat "$root/db/schema.sql" fixture.sql
  echo "PRAGMA journal_mode = DELETE;"; } | sqlite3 fixture.db >/dev/null
cp fixture.db fixture-v1.db
sqlite3 fixture-v1.db "ALTER TABLE result DROP COLUMN reps; ALTER TABLE sweep DROP COLUMN pid;
    ALTER TABLE result ADD COLUMN err_dx REAL; ALTER TABLE result ADD COLUMN err_dw REAL;
    UPDATE result SET err_dx = (SELECT value FROM error WHERE result_id = result.id AND tensor = 'dx'),
        err_dw = (SELECT value FROM error WHERE result_id = result.id AND tensor = 'dw');
    DROP TABLE error; PRAGMA user_version = 1; VACUUM;"
