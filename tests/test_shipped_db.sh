#!/bin/sh
# test_shipped_db.sh -- what the commands do to a database they open, on a
# copy of the shipped data/results.db and on small files made here:
#   - reading commands (query, report, export, plot) and `migrate` of a
#     database already at this schema leave the file byte-identical (so git
#     shows the shipped file unchanged after them); the export of the
#     shipped file is the shipped header;
#   - a `migrate` that fails half-way (a schema-4 file whose step to 5
#     breaks a UNIQUE key) exits 1 and leaves the file at its schema and in
#     the journal mode it had: rollback mode stays rollback mode with no
#     -wal/-shm beside it, WAL mode stays WAL mode;
#   - reading commands check with PRAGMA quick_check, writers and merges
#     with the full PRAGMA integrity_check: a file whose index disagrees
#     with its table (quick_check passes it) is read, and refused by
#     migrate and merge (tests/test_dbsafe.sh: damage that reads must
#     refuse still is).
# Needs NORMTUNE (the binary), NT_TMP (a scratch dir) and the sqlite3 shell;
# prints PASS/FAIL lines and "RESULT passed failed".
NAME=test_shipped_db
. "$(dirname "$0")/lib.sh"

need_sqlite3 "database checks"

# mode FILE: the journal mode the file's header records (wal or delete)
mode() { sqlite3 "$1" "PRAGMA journal_mode"; }

# ---- the shipped database: reads and migrate leave it as it is -----------------
ship="$root/data/results.db"
cp "$ship" "$T/r.db"
expect ship_report 0 report --db "$T/r.db"
expect ship_report_csv 0 report --db "$T/r.db" --format csv -o "$T/report.csv"
expect ship_query_best 0 query --db "$T/r.db" best
expect ship_query_sweeps 0 query --db "$T/r.db" sweeps
expect ship_export 0 export --db "$T/r.db" -o "$T/dispatch.h"
if cmp -s "$T/dispatch.h" "$root/kernels/normtune_dispatch.h"; then
    ok ship_export_is_shipped_header
else
    bad ship_export_is_shipped_header "export of data/results.db differs from kernels/normtune_dispatch.h"
fi
# --newest (make tune's): the model of the newest sweep's GPU, here the
# file's one model, so the same header and report; with --device: usage
expect ship_export_newest 0 export --db "$T/r.db" --newest -o "$T/newest.h"
cmp -s "$T/newest.h" "$T/dispatch.h" && ok ship_export_newest_same || bad ship_export_newest_same
expect ship_report_newest 0 report --db "$T/r.db" --newest -o "$T/newest.md"
expect ship_report_plain 0 report --db "$T/r.db" -o "$T/plain.md"
cmp -s "$T/newest.md" "$T/plain.md" && ok ship_report_newest_same || bad ship_report_newest_same
expect ship_newest_and_device 2 report --db "$T/r.db" --newest --device "NVIDIA H200"
has ship_newest_and_device_message "$T/err" "--device and --newest both name the model"
expect ship_export_newest_and_device 2 export --db "$T/r.db" --newest --device "NVIDIA H200" -o "$T/x.h"
if command -v gnuplot >/dev/null 2>&1; then
    expect ship_plot 0 plot --db "$T/r.db" -o "$T/x.svg"
    has ship_plot_svg "$T/x.svg" "<svg"
else
    echo "SKIP ship_plot: no gnuplot"
fi
cmp -s "$T/r.db" "$ship" && ok ship_reads_leave_file || bad ship_reads_leave_file
expect ship_migrate 0 migrate --db "$T/r.db"
has ship_migrate_says "$T/err" "is at schema"
cmp -s "$T/r.db" "$ship" && ok ship_migrate_byte_identical ||
    bad ship_migrate_byte_identical "$(cmp -l "$T/r.db" "$ship" | head -3)"
[ -z "$(names "$T/r.db")" ] && ok ship_no_wal_left || bad ship_no_wal_left "$(names "$T/r.db")"
rm -f "$T/r.db"

# ---- small files -----------------------------------------------------------------
# cur FILE: a database of this schema with one device, sweep, variant, shape
# and result (made from db/schema.sql by the sqlite3 shell)
cur() {
    sqlite3 "$1" <"$root/db/schema.sql" && sqlite3 "$1" "
INSERT INTO device VALUES (1, 'NVIDIA H200', 9, 0, 132, 62914560, 1980000, 2619000, 6144,
    '570.86', '12.8', '13.0', 'GPU-1111');
INSERT INTO sweep(id, script, script_hash, started, device_id, status) VALUES
    (1, 's.lua', 'h', '2026-01-01T00:00:00.000Z', 1, 'done');
INSERT INTO variant VALUES (1, 'rmsnorm_bwd.naive', 'nsplit=64,partial=f32', 'abc');
INSERT INTO shape VALUES (1, 'rmsnorm_bwd', 'x=bf16,w=bf16,dw=f32', 2048, 4096);
INSERT INTO result(id, sweep_id, variant_id, shape_id, device_id, warmup, min_samples,
    max_samples, rel_ci, status, median_us, gbps, pct_copy, created) VALUES
    (1, 1, 1, 1, 1, 10, 20, 200, 0.01, 'ok', 40.0, 500.0, 12.5, '2026-01-01T00:00:01.000Z');"
}

cur "$T/c.db"
cp "$T/c.db" "$T/c.orig"
expect small_migrate_current 0 migrate --db "$T/c.db"
cmp -s "$T/c.db" "$T/c.orig" && ok small_migrate_byte_identical || bad small_migrate_byte_identical

# a current file left in WAL mode (as the sqlite3 shell leaves one) is put
# back in rollback mode, where it can be read in a directory one cannot write
cur "$T/cw.db"
sqlite3 "$T/cw.db" "PRAGMA journal_mode = WAL" >/dev/null
expect migrate_current_wal 0 migrate --db "$T/cw.db"
[ "$(mode "$T/cw.db")" = delete ] && ok migrate_current_wal_to_rollback ||
    bad migrate_current_wal_to_rollback "journal mode $(mode "$T/cw.db")"

# fail4 FILE: a schema-4 file whose migration fails in step 4 -> 5: its two
# shapes "bf16" and "x=bf16,w=bf16,dw=f32" of one size become the same key
fail4() {
    cur "$1" && sqlite3 "$1" "DROP VIEW best; ALTER TABLE error DROP COLUMN required;
        ALTER TABLE result DROP COLUMN traffic_gbps;
        CREATE VIEW best AS SELECT * FROM result;
        INSERT INTO shape VALUES (2, 'rmsnorm_bwd', 'bf16', 2048, 4096);
        PRAGMA user_version = 4"
}
fail4 "$T/f.db"
[ "$(mode "$T/f.db")" = delete ] && ok fail_starts_rollback || bad fail_starts_rollback "$(mode "$T/f.db")"
expect migrate_fails 1 migrate --db "$T/f.db"
has migrate_fails_says "$T/err" "UNIQUE constraint failed"
[ "$(mode "$T/f.db")" = delete ] && ok failed_migrate_keeps_rollback ||
    bad failed_migrate_keeps_rollback "journal mode $(mode "$T/f.db")"
[ -z "$(names "$T/f.db")" ] && ok failed_migrate_no_wal || bad failed_migrate_no_wal "$(names "$T/f.db")"
[ "$(sqlite3 "$T/f.db" "PRAGMA user_version")" = 4 ] && ok failed_migrate_keeps_schema ||
    bad failed_migrate_keeps_schema
[ "$(sqlite3 "$T/f.db" "SELECT count(*) FROM shape WHERE dtype = 'bf16'")" = 1 ] &&
    ok failed_migrate_rolls_back || bad failed_migrate_rolls_back

fail4 "$T/w.db"
sqlite3 "$T/w.db" "PRAGMA journal_mode = WAL" >/dev/null
[ "$(mode "$T/w.db")" = wal ] && ok fail_starts_wal || bad fail_starts_wal
expect migrate_fails_wal 1 migrate --db "$T/w.db"
[ "$(mode "$T/w.db")" = wal ] && ok failed_migrate_keeps_wal ||
    bad failed_migrate_keeps_wal "journal mode $(mode "$T/w.db")"

# ---- quick_check for reading, integrity_check for writing and merging --------
# The index result_sweep made to claim another column: its entries no longer
# match the table.  quick_check does not compare indexes with tables.
cur "$T/i.db"
sqlite3 "$T/i.db" "PRAGMA writable_schema = ON;
    UPDATE sqlite_master SET sql = 'CREATE INDEX result_sweep ON result (variant_id, sweep_id)'
    WHERE name = 'result_sweep';" 2>/dev/null
[ "$(sqlite3 "$T/i.db" "PRAGMA integrity_check" 2>&1)" != ok ] && ok index_damage_made ||
    bad index_damage_made
[ "$(sqlite3 "$T/i.db" "PRAGMA quick_check")" = ok ] && ok index_damage_passes_quick_check ||
    bad index_damage_passes_quick_check
cp "$T/i.db" "$T/i.orig"
expect read_uses_quick_check 0 query --db "$T/i.db" best
expect report_uses_quick_check 0 report --db "$T/i.db"
expect migrate_uses_integrity_check 1 migrate --db "$T/i.db"
has migrate_names_integrity_check "$T/err" "database is damaged (integrity_check"
cur "$T/ok.db"
expect merge_uses_integrity_check 1 merge "$T/ok.db" "$T/i.db" -o "$T/m.db"
has merge_names_integrity_check "$T/err" "database is damaged (integrity_check"
[ ! -e "$T/m.db" ] && ok merge_no_output || bad merge_no_output
cmp -s "$T/i.db" "$T/i.orig" && ok damaged_index_untouched || bad damaged_index_untouched

finish
[ "$failed" = 0 ]
