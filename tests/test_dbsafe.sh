#!/bin/sh
# test_dbsafe.sh -- damaged, read-only and busy databases from the command
# line, on copies of an eighth of the shipped data/results.db (schema 3):
#   - `migrate` brings a schema-3 and a schema-2 copy to the current schema
#     and keeps every result and sample (counts and values before == after)
#     and every dx/dw error (schema 4 keeps them as rows of `error`);
#   - a damaged page of the device table (read as an empty table by SQLite
#     until checked) and 64 flipped bytes mid-file: query, report, export,
#     migrate and merge exit 1 with a message naming the file, and the file
#     is left as it was;
#   - a read-only database: migrate exits 1 before writing and leaves no
#     -wal/-shm files; query still reads one in a directory it cannot write
#     (as another user when run as root, through setpriv);
#   - merge while another process keeps writing into the source succeeds
#     every time, and prints its counts.
# Needs NORMTUNE (the binary), NT_TMP (a scratch dir) and the sqlite3 shell;
# prints PASS/FAIL lines and "RESULT passed failed".
NAME=test_dbsafe
. "$(dirname "$0")/lib.sh"

need_sqlite3 "database checks"


# ---- the shipped database, migrated from schema 3 and 2: nothing lost --------
ship="$root/data/results.db"
cur=$(sed -n 's/^PRAGMA user_version = \([0-9]*\);.*/\1/p' "$root/db/schema.sql")
cp "$ship" "$T/base.db"
# An eighth of its results (ids of both parities, every device, shape and
# sweep table kept whole), with their samples and errors: the same data,
# small enough that the many copies, merges and checks below stay quick.
sqlite3 "$T/base.db" "DELETE FROM sample WHERE result_id % 16 NOT IN (0, 1);
    DELETE FROM error WHERE result_id % 16 NOT IN (0, 1);
    DELETE FROM result WHERE id % 16 NOT IN (0, 1); VACUUM" || bad shrink_copy
# (the shipped file is at the current schema; a schema-3 copy is made from
# it: schema 6's re-measures (with schema 7's method) dropped, schema 5's
# dtype slots back to one dtype, the required tolerances dropped, then the
# named dx/dw errors back into the columns err_dx/err_dw)
v=$(sqlite3 "$T/base.db" "PRAGMA user_version")
if [ "$v" = 6 ] || [ "$v" = 7 ]; then
    sqlite3 "$T/base.db" "DROP VIEW best; DROP TABLE rematch;
        CREATE VIEW best AS SELECT * FROM result; PRAGMA user_version = 5"
fi
if [ "$(sqlite3 "$T/base.db" "PRAGMA user_version")" = 5 ]; then
    sqlite3 "$T/base.db" "DROP VIEW best; ALTER TABLE error DROP COLUMN required;
        ALTER TABLE result DROP COLUMN traffic_gbps;
        UPDATE shape SET dtype = 'bf16' WHERE dtype = 'x=bf16,w=bf16,dw=f32';
        CREATE VIEW best AS SELECT * FROM result; PRAGMA user_version = 4"
fi
if [ "$(sqlite3 "$T/base.db" "PRAGMA user_version")" = 4 ]; then
    sqlite3 "$T/base.db" "ALTER TABLE result ADD COLUMN err_dx REAL;
        ALTER TABLE result ADD COLUMN err_dw REAL;
        UPDATE result SET err_dx = (SELECT value FROM error e WHERE e.result_id = result.id
            AND e.tensor = 'dx'), err_dw = (SELECT value FROM error e
            WHERE e.result_id = result.id AND e.tensor = 'dw');
        DROP TABLE error; PRAGMA user_version = 3"
fi
[ "$(sqlite3 "$T/base.db" "PRAGMA user_version")" = 3 ] && ok schema_3_copy || bad schema_3_copy
q='SELECT count(*) FROM result; SELECT count(*) FROM sample; SELECT count(*) FROM sweep;
   SELECT count(*) FROM variant; SELECT count(*) FROM shape; SELECT count(*) FROM device;
   SELECT sum(median_us), sum(n_samples), max(created) FROM result; SELECT sum(us) FROM sample;
   SELECT id, status, median_us, gbps, reps FROM result ORDER BY id LIMIT 3;
   SELECT result_id, idx, us FROM sample ORDER BY result_id DESC, idx DESC LIMIT 2;'
# the errors of schema 3 (columns) and of schema 4 (rows), as the same text
errs3="SELECT id, 'dx', quote(err_dx) FROM result WHERE err_dx IS NOT NULL UNION ALL
   SELECT id, 'dw', quote(err_dw) FROM result WHERE err_dw IS NOT NULL ORDER BY 1, 2"
errs4="SELECT result_id, tensor, quote(value) FROM error ORDER BY 1, 2"
before=$(sqlite3 "$T/base.db" "$q")
errs_before=$(sqlite3 "$T/base.db" "$errs3")
cp "$T/base.db" "$T/s3.db"
sqlite3 "$T/base.db" "ALTER TABLE sweep DROP COLUMN pid; PRAGMA user_version = 2"
[ "$(sqlite3 "$T/base.db" "PRAGMA user_version")" = 2 ] && ok schema_2_copy || bad schema_2_copy
[ "$(echo "$errs_before" | wc -l)" -gt 1000 ] && ok shipped_has_errors ||
    bad shipped_has_errors "$(echo "$errs_before" | wc -l) error values"
for v in 3 2; do
    f="$T/base.db"; [ $v = 3 ] && f="$T/s3.db"
    expect "migrate_schema_$v" 0 migrate --db "$f"
    after=$(sqlite3 "$f" "$q")
    [ -n "$before" ] && [ "$before" = "$after" ] && ok "migrate_${v}_keeps_every_row" ||
        bad "migrate_${v}_keeps_every_row" "before: $before | after: $after"
    errs_after=$(sqlite3 "$f" "$errs4")
    [ -n "$errs_before" ] && [ "$errs_before" = "$errs_after" ] && ok "migrate_${v}_keeps_errors" ||
        bad "migrate_${v}_keeps_errors" "$(echo "$errs_before" | head -3) | $(echo "$errs_after" | head -3)"
    [ "$(sqlite3 "$f" "SELECT count(*) FROM error WHERE tolerance IS NOT NULL")" = 0 ] &&
        ok "migrate_${v}_tolerance_unknown" || bad "migrate_${v}_tolerance_unknown"
    [ "$(sqlite3 "$f" "SELECT count(*) FROM pragma_table_info('result') WHERE name LIKE 'err_d_'")" = 0 ] &&
        ok "migrate_${v}_drops_err_columns" || bad "migrate_${v}_drops_err_columns"
    [ "$(sqlite3 "$f" "PRAGMA user_version")" = "$cur" ] && ok "migrated_${v}_to_current" ||
        bad "migrated_${v}_to_current"
    [ "$(sqlite3 "$f" "SELECT count(*) FROM pragma_foreign_key_check")" = 0 ] &&
        ok "migrated_${v}_foreign_keys" || bad "migrated_${v}_foreign_keys"
done
# a few values by hand: the first dx and dw errors of the shipped file
for t in dx dw; do
    old=$(sqlite3 "$ship" "SELECT id, err_$t FROM result WHERE err_$t IS NOT NULL ORDER BY id LIMIT 1" 2>/dev/null ||
          sqlite3 "$ship" "SELECT result_id, value FROM error WHERE tensor = '$t' ORDER BY result_id LIMIT 1")
    new=$(sqlite3 "$T/s3.db" "SELECT result_id, value FROM error WHERE tensor = '$t' ORDER BY result_id LIMIT 1")
    [ -n "$old" ] && [ "$old" = "$new" ] && ok "migrated_first_$t" || bad "migrated_first_$t" "$old vs $new"
done
[ "$(sqlite3 "$T/base.db" "SELECT count(*) FROM pragma_table_info('sweep') WHERE name = 'pid'")" = 1 ] &&
    ok migrated_pid_column || bad migrated_pid_column
[ "$(sqlite3 "$T/base.db" "SELECT count(*) FROM result")" -gt 1000 ] && ok shipped_has_results ||
    bad shipped_has_results
[ -z "$(names "$T/base.db")" ] && ok migrate_leaves_one_file || bad migrate_leaves_one_file "$(names "$T/base.db")"
expect query_migrated 0 query --db "$T/base.db"

# ---- damaged files --------------------------------------------------------------
# refused TAG FILE: every command that opens FILE exits 1 naming it, and
# leaves it byte-identical with no output written
refused() {
    tag=$1; f=$2; base=$(basename "$f")
    cp "$f" "$T/$tag.orig"
    for c in "query" "query sweeps" "report" "export" "migrate" "merge"; do
        n="${tag}_$(echo "$c" | tr ' ' _)"
        case $c in
            export) expect "$n" 1 export --db "$f" -o "$T/$tag.h" ;;
            merge) expect "$n" 1 merge "$T/base.db" "$f" -o "$T/$tag-m.db" ;;
            migrate) expect "$n" 1 migrate --db "$f" ;;
            *) expect "$n" 1 $c --db "$f" ;;
        esac
        has "${n}_names_file" "$T/err" "$base: database is damaged"
    done
    [ ! -e "$T/$tag.h" ] && [ ! -e "$T/$tag-m.db" ] && ok "${tag}_no_output" || bad "${tag}_no_output"
    cmp -s "$f" "$T/$tag.orig" && ok "${tag}_untouched" || bad "${tag}_untouched"
    [ -z "$(names "$f")" ] && ok "${tag}_no_wal_left" || bad "${tag}_no_wal_left" "$(names "$f")"
}

# the root page of the device table overwritten with an empty table page:
# SQLite itself then reads the table as empty ("(no rows)", "no results")
cp "$T/base.db" "$T/devpage.db"
page=$(sqlite3 "$T/devpage.db" "PRAGMA page_size")
rootpage=$(sqlite3 "$T/devpage.db" "SELECT rootpage FROM sqlite_master WHERE name = 'device'")
hi=$((page / 256)); lo=$((page % 256))
{ printf '\015\000\000\000\000'; printf "\\$(printf %o $hi)\\$(printf %o $lo)"; printf '\000'; } |
    dd of="$T/devpage.db" bs=1 seek=$(((rootpage - 1) * page)) conv=notrunc 2>/dev/null
dd if=/dev/zero of="$T/devpage.db" bs=1 seek=$(((rootpage - 1) * page + 8)) count=$((page - 8)) \
    conv=notrunc 2>/dev/null
[ "$(sqlite3 "$T/devpage.db" "SELECT count(*) FROM device NOT INDEXED")" = 0 ] && ok devpage_reads_empty ||
    bad devpage_reads_empty "the damage did not make the table read as empty"
refused devpage "$T/devpage.db"

# 64 bytes flipped in the middle of the file
cp "$T/base.db" "$T/flip.db"
off=$(($(wc -c <"$T/flip.db") / 2))
dd if="$T/flip.db" bs=1 skip=$off count=64 2>/dev/null | perl -0777 -pe '$_ = ~$_' |
    dd of="$T/flip.db" bs=1 seek=$off conv=notrunc 2>/dev/null
cmp -s "$T/flip.db" "$T/base.db" && bad flip_changed_the_file || ok flip_changed_the_file
refused flip "$T/flip.db"

# ---- read-only databases ------------------------------------------------------------
# As root, chmod stops no write: run the commands as nobody instead.
asuser=""
if [ "$(id -u)" = 0 ]; then
    if command -v setpriv >/dev/null 2>&1; then
        asuser="setpriv --reuid=65534 --regid=65534 --clear-groups"
    else
        echo "SKIP read-only checks: running as root without setpriv"
        asuser=skip
    fi
fi
if [ "$asuser" != skip ]; then
    # xrun NAME RC ARGS: like expect, as the other user
    xrun() {
        name=$1; want=$2; shift 2
        $asuser "$NORMTUNE" "$@" >"$R/out" 2>"$R/err"; rc=$?
        if [ "$rc" = "$want" ]; then ok "$name"; else bad "$name" "exit $rc, want $want: $(head -c 300 "$R/err")"; fi
    }
    R=$(mktemp -d "${TMPDIR:-/tmp}/normtune-ro.XXXXXX")
    mkdir "$R/rw" "$R/ro"
    # a WAL-mode file, as `sqlite3` leaves one, in a writable directory
    cp "$T/base.db" "$R/rw/wal.db"
    sqlite3 "$R/rw/wal.db" "PRAGMA journal_mode = WAL" >/dev/null
    # a file as normtune leaves it, in a directory nobody may write
    cp "$T/base.db" "$R/ro/done.db"
    # a WAL-mode file there: SQLite cannot read it without creating -wal/-shm
    cp "$R/rw/wal.db" "$R/ro/wal.db"
    chmod 444 "$R/rw/wal.db" "$R/ro/done.db" "$R/ro/wal.db"
    chmod 755 "$R"; chmod 777 "$R/rw"; chmod 555 "$R/ro"
    cp "$R/rw/wal.db" "$R/wal.orig"

    xrun ro_migrate 1 migrate --db "$R/rw/wal.db"
    has ro_migrate_message "$R/err" "wal.db: cannot write it"
    [ -z "$(names "$R/rw/wal.db")" ] && ok ro_migrate_no_wal_left || bad ro_migrate_no_wal_left "$(names "$R/rw/wal.db")"
    cmp -s "$R/rw/wal.db" "$R/wal.orig" && ok ro_migrate_untouched || bad ro_migrate_untouched
    xrun ro_dir_merge_out 1 merge "$R/ro/done.db" "$R/ro/done.db" -o "$R/ro/m.db"
    xrun ro_dir_query 0 query --db "$R/ro/done.db"
    has ro_dir_query_rows "$R/out" "rmsnorm_bwd"
    # (named by the newest GPU's uuid: its model, every H200 of the file)
    xrun ro_dir_report 0 report --db "$R/ro/done.db" --device \
        "$(sqlite3 "$T/base.db" "SELECT uuid FROM device ORDER BY id DESC LIMIT 1")"
    xrun ro_dir_migrate 1 migrate --db "$R/ro/done.db"
    has ro_dir_migrate_message "$R/err" "cannot write"
    [ -z "$(names "$R/ro/done.db")" ] && ok ro_dir_no_wal_left || bad ro_dir_no_wal_left
    xrun ro_file_query 0 query --db "$R/rw/wal.db" sweeps
    xrun ro_dir_wal_query 1 query --db "$R/ro/wal.db"
    has ro_dir_wal_query_message "$R/err" "wal.db: cannot read it here"
    chmod -R u+w "$R"; rm -rf "$R"
fi

# ---- merge while another process writes the source ------------------------------
# The source is in WAL mode, as during a sweep.  The writer opens, changes
# many pages in one transaction and closes, again and again (each sqlite3
# run checkpoints and removes the -wal file).
cp "$T/base.db" "$T/live.db"
sqlite3 "$T/live.db" "PRAGMA journal_mode = WAL" >/dev/null
cp "$T/base.db" "$T/other.db"
sqlite3 "$T/other.db" "DELETE FROM sample WHERE result_id IN (SELECT id FROM result WHERE id % 2 = 0);
    DELETE FROM error WHERE result_id IN (SELECT id FROM result WHERE id % 2 = 0);
    DELETE FROM result WHERE id % 2 = 0; UPDATE result SET median_us = median_us * 1.5 WHERE id % 3 = 0;"
nres=$(sqlite3 "$T/base.db" "SELECT count(*) FROM result")
(
    i=0
    while [ ! -e "$T/stop" ]; do
        i=$((i + 1))
        sqlite3 "$T/live.db" ".timeout 5000" "BEGIN IMMEDIATE;
            DELETE FROM result WHERE warmup = 99;
            INSERT INTO result(sweep_id, variant_id, shape_id, device_id, warmup, min_samples,
              max_samples, rel_ci, status, message, median_us, n_samples, created)
              SELECT sweep_id, variant_id, shape_id, device_id, 99, min_samples, max_samples,
              rel_ci, status, 'copy $i', median_us * 1.01, 0, created FROM result
              WHERE warmup <> 99 AND id % 2 = $((i % 2));
            UPDATE sweep SET finished = '$i';
            COMMIT;" >/dev/null 2>&1
    done
) &
wpid=$!
tries=12; good=0; why=""
i=0
while [ $i -lt $tries ]; do
    i=$((i + 1))
    rm -f "$T/live-m.db"
    if "$NORMTUNE" merge "$T/live.db" "$T/other.db" -o "$T/live-m.db" >"$T/out" 2>"$T/err" &&
        [ "$(sqlite3 "$T/live-m.db" "PRAGMA integrity_check")" = ok ] &&
        [ "$(sqlite3 "$T/live-m.db" "SELECT count(*) FROM result WHERE warmup <> 99")" = "$nres" ]; then
        good=$((good + 1))
    else
        why="$(head -c 300 "$T/err")"
    fi
done
touch "$T/stop"
wait $wpid
[ "$good" = $tries ] && ok "merge_while_writing_${tries}_of_${tries}" ||
    bad "merge_while_writing_${tries}_of_${tries}" "$good succeeded; last failure: $why"
changes=$(sqlite3 "$T/live.db" "SELECT finished FROM sweep LIMIT 1")
[ "${changes:-0}" -gt 2 ] 2>/dev/null && ok merge_writer_was_writing ||
    bad merge_writer_was_writing "the writer made ${changes:-no} changes"

# ---- merge counts -------------------------------------------------------------------
# other.db: every odd result of base.db; a third of them measured differently
odd=$(sqlite3 "$T/base.db" "SELECT count(*) FROM result WHERE id % 2 = 1")
diff=$(sqlite3 "$T/base.db" "SELECT count(*) FROM result WHERE id % 2 = 1 AND id % 3 = 0
    AND median_us IS NOT NULL")
expect merge_counts 0 merge "$T/other.db" "$T/base.db" -o "$T/counts.db"
has merge_counts_line "$T/err" "counts.db: $nres results ($odd from A, $((nres - odd)) from B, $((odd - diff)) in both, $diff differ: kept A's)"

finish
