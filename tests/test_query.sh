#!/bin/sh
# test_query.sh -- `normtune query`, `normtune report`, `normtune merge` from
# the command line: --help (exit 0), usage errors (exit 2, one line on
# stderr), missing and foreign files (exit 1, file left as it was).
#
# When the sqlite3 command-line shell is installed, it also builds small
# databases from db/schema.sql plus a few INSERTs and checks the reports,
# the markdown of `report`, merging, and the refusal of another program's
# SQLite file and of a newer schema; without it those checks print SKIP.
# (The store itself is tested in depth by tests/test_db.c.)
#
# Needs NORMTUNE (the binary) and NT_TMP (a scratch dir); prints PASS/FAIL
# lines and "RESULT passed failed".
NAME=test_query
. "$(dirname "$0")/lib.sh"

one_line() {
    if [ "$(wc -l <"$T/err")" = 1 ]; then ok "$1"; else bad "$1" "$(cat "$T/err")"; fi
}

# ---- help and usage errors ---------------------------------------------------
for c in query report merge; do
    expect "${c}_help" 0 $c --help
    has "${c}_help_text" "$T/out" "usage: normtune $c"
done
expect query_no_db 2 query best
one_line query_no_db_one_line
expect query_db_no_value 2 query --db
expect query_bad_report 2 query --db x.db frobnicate
expect query_shape_one_arg 2 query --db x.db shape 2048
expect query_shape_not_number 2 query --db x.db shape 2048 abc
expect query_shape_mixed 2 query --db x.db shape M=2048 4096
has query_shape_mixed_usage "$T/err" "shape N M"
expect query_shape_twice 2 query --db x.db shape N=2048 N=4096
expect query_shape_bad_name 2 query --db x.db shape K=2048 N=4096
expect query_shape_help 0 query --help
has query_shape_help_text "$T/out" "shape N M"
expect query_samples_zero 2 query --db x.db samples 0
expect query_best_extra 2 query --db x.db best 1
expect query_bad_option 2 query --db x.db --frobnicate
expect report_no_db 2 report
expect report_extra 2 report --db x.db best
expect merge_no_output 2 merge a.db b.db
expect merge_no_input 2 merge -o c.db
one_line merge_usage_one_line
# any number of inputs (tests/test_shard.sh merges three); a missing one is
# named, and no output is left
expect merge_three_inputs_missing 1 merge a.db b.db c.db -o d.db
has merge_missing_named "$T/err" "a.db"
[ ! -e d.db ] && ok merge_missing_no_output || bad merge_missing_no_output

# ---- missing and foreign files -------------------------------------------------
expect query_missing_db 1 query --db "$T/nope.db"
has query_missing_db_message "$T/err" "nope.db"
expect report_missing_db 1 report --db "$T/nope.db"
[ ! -e "$T/nope.db" ] && ok missing_not_created || bad missing_not_created
i=0
while [ $i -lt 40 ]; do echo "line $i of a text file, not a database"; i=$((i + 1)); done >"$T/notes.db"
cp "$T/notes.db" "$T/notes.orig"
expect query_text_file 1 query --db "$T/notes.db"
has query_text_file_message "$T/err" "not an SQLite database"
one_line query_text_file_one_line
expect report_text_file 1 report --db "$T/notes.db"
expect merge_text_input 1 merge "$T/notes.db" "$T/notes.db" -o "$T/m0.db"
[ ! -e "$T/m0.db" ] && ok merge_failed_no_output || bad merge_failed_no_output
cmp -s "$T/notes.db" "$T/notes.orig" && ok text_file_untouched || bad text_file_untouched
[ ! -e "$T/notes.db-wal" ] && [ ! -e "$T/notes.db-shm" ] && ok text_file_no_wal || bad text_file_no_wal

# ---- with real databases (needs the sqlite3 shell) -----------------------------
if ! command -v sqlite3 >/dev/null 2>&1; then
    echo "SKIP database checks: no sqlite3 command-line shell"
    rm -rf "$T"
    echo "RESULT $passed $failed"
    [ "$failed" = 0 ]
    exit
fi

# mkdb FILE UUID NAME [SMS]: a normtune database with one device (132 SMs
# unless SMS), one sweep, one shape (M=2048 N=4096), a naive result at 40 us
# and a persistent one at 20 us (with 3 samples), and a failed persistent
# one at 10 us.
mkdb() {
    sqlite3 "$1" <"$root/db/schema.sql" && sqlite3 "$1" <<EOF
INSERT INTO device VALUES (1, '$3', 9, 0, ${4:-132}, 62914560, 1980000, 2619000, 6144,
    '570.86', '12.8', '13.0', '$2');
INSERT INTO sweep VALUES (1, 'sweeps/x.lua', 'h1', '2025-01-01T00:00:00.000Z',
    '2025-01-01T01:00:00.000Z', 1, 'done', 4000.0, 'host-$2', NULL);
INSERT INTO variant VALUES (1, 'rmsnorm_bwd.naive', 'nsplit=64,partial=f32', 'abc'),
    (2, 'rmsnorm_bwd.persistent', 'block=256,chunks=2,stages=2,k=0', 'abc'),
    (3, 'rmsnorm_bwd.persistent', 'block=64,chunks=8,stages=1,k=0', 'abc');
INSERT INTO shape VALUES (1, 'rmsnorm_bwd', 'bf16', 2048, 4096);
INSERT INTO result(id, sweep_id, variant_id, shape_id, device_id, warmup,
    min_samples, max_samples, rel_ci, status, message, median_us, p10_us, p90_us,
    n_samples, bytes, gbps, pct_copy, created) VALUES
  (1, 1, 1, 1, 1, 10, 20, 200, 0.01, 'ok', '', 40.0, 39.0, 41.0, 0, 33554432,
   838.86, 20.97, '2025-01-01T00:10:00.000Z'),
  (2, 1, 2, 1, 1, 10, 20, 200, 0.01, 'ok', '', 20.0, 19.5, 20.5, 3, 33554432,
   1677.72, 41.94, '2025-01-01T00:20:00.000Z'),
  (3, 1, 3, 1, 1, 10, 20, 200, 0.01, 'wrong', 'dw error 3e-2', 10.0, 9.9, 10.1, 0,
   33554432, 3355.44, 83.89, '2025-01-01T00:30:00.000Z');
INSERT INTO sample VALUES (2, 0, 20.0), (2, 1, 19.91), (2, 2, 20.123);
EOF
}
mkdb "$T/a.db" GPU-1 "NVIDIA H200" && mkdb "$T/b.db" GPU-2 "NVIDIA H100" &&
    ok fixtures || bad fixtures "sqlite3 could not build the fixtures"
cp "$T/a.db" "$T/a.orig"

expect query_best 0 query --db "$T/a.db"
has query_best_row "$T/out" "rmsnorm_bwd.persistent  block=256,chunks=2,stages=2,k=0  20.00  1677.7    41.9       2"
# N first, as every table prints it (the fixture's shape is N=4096 M=2048)
expect query_shape 0 query --db "$T/a.db" shape 4096 2048
has query_shape_rank1 "$T/out" "   1  rmsnorm_bwd  bf16   rmsnorm_bwd.persistent  block=256,chunks=2,stages=2,k=0  ok"
has query_shape_pct_best "$T/out" "50.0"
has query_shape_failed "$T/out" "dw error 3e-2"
expect query_shape_named 0 query --db "$T/a.db" shape N=4096 M=2048
has query_shape_named_rank1 "$T/out" "   1  rmsnorm_bwd  bf16   rmsnorm_bwd.persistent"
expect query_shape_named_swapped 0 query --db "$T/a.db" shape M=2048 N=4096
has query_shape_named_swapped_rank1 "$T/out" "   1  rmsnorm_bwd  bf16   rmsnorm_bwd.persistent"
expect query_shape_old_order 1 query --db "$T/a.db" shape 2048 4096
has query_shape_old_order_names "$T/err" "M=4096 N=2048"
expect query_samples 0 query --db "$T/a.db" samples 2
has query_samples_rounded "$T/out" "  2  20.12"
expect query_sweeps 0 query --db "$T/a.db" sweeps
has query_sweeps_row "$T/out" "done       4000.0        3   2"
expect query_unknown_device 1 query --db "$T/a.db" --device "A100"
has query_unknown_device_names "$T/err" "NVIDIA H200 (cc 9.0, 132 SMs, memory clock 2619000 kHz: GPU-1)"
expect query_no_such_shape 1 query --db "$T/a.db" shape 3 5
expect query_no_such_result 1 query --db "$T/a.db" samples 99

expect report 0 report --db "$T/a.db"
has report_title "$T/out" "## normtune report: NVIDIA H200"
has report_header "$T/out" "|    N |    M | family     | params"
has report_row "$T/out" "| 4096 | 2048 | persistent | block=256,chunks=2,stages=2,k=0 | 20.00 | 1677.7 |   41.9 |    - | naive     |           2.00 |"
cmp -s "$T/a.db" "$T/a.orig" && ok reads_leave_file_untouched || bad reads_leave_file_untouched
# a family's best is its first row as best ranks them (its re-measure, where
# one was made, before its median): naive's 40 us result re-measured at 25
# us ranks before its 30 us one, so the runner-up ratio is 40 / 20, not 30 / 20
cp "$T/a.db" "$T/r.db"
sqlite3 "$T/r.db" "INSERT INTO variant VALUES (4, 'rmsnorm_bwd.naive', 'nsplit=32,partial=f32', 'abc');
INSERT INTO result(id, sweep_id, variant_id, shape_id, device_id, warmup, min_samples, max_samples,
    rel_ci, status, message, median_us, p10_us, p90_us, n_samples, bytes, gbps, pct_copy, created)
    VALUES (4, 1, 4, 1, 1, 10, 20, 200, 0.01, 'ok', '', 30.0, 29.0, 31.0, 0, 33554432, 1118.48,
    27.96, '2025-01-01T00:40:00.000Z');
INSERT INTO rematch(id, grp, sweep_id, device_id, result_id, median_us, n_samples, rank_us, created)
    VALUES (1, 1, 1, 1, 1, 25.0, 10, 25.0, '2025-01-01T00:50:00.000Z');" &&
    ok fixture_rematch || bad fixture_rematch
expect report_family_best 0 report --db "$T/r.db"
has report_family_best_ratio "$T/out" "| 4096 | 2048 | persistent | block=256,chunks=2,stages=2,k=0 | 20.00 | 1677.7 |   41.9 |    - | naive     |           2.00 |"

expect merge 0 merge "$T/a.db" "$T/b.db" -o "$T/m.db"
expect merge_sweeps 0 query --db "$T/m.db" sweeps
[ "$(grep -c done "$T/out")" = 2 ] && ok merge_two_sweeps || bad merge_two_sweeps "$(cat "$T/out")"
expect merge_again_overlap 0 merge "$T/m.db" "$T/a.db" -o "$T/m2.db"
n=$(sqlite3 "$T/m2.db" "SELECT count(*) FROM result; SELECT count(*) FROM sample" | tr '\n' ' ')
[ "$n" = "6 6 " ] && ok merge_no_duplicates || bad merge_no_duplicates "results, samples: $n"
expect report_two_devices 1 report --db "$T/m.db"
has report_two_devices_names "$T/err" "NVIDIA H100"
expect report_by_uuid 0 report --db "$T/m.db" --device GPU-2
has report_by_uuid_title "$T/out" "## normtune report: NVIDIA H100"
cp "$T/m.db" "$T/m.orig"
expect merge_output_exists 1 merge "$T/a.db" "$T/b.db" -o "$T/m.db"
cmp -s "$T/m.db" "$T/m.orig" && ok merge_output_untouched || bad merge_output_untouched
cmp -s "$T/a.db" "$T/a.orig" && ok merge_input_untouched || bad merge_input_untouched

sqlite3 "$T/other.db" "CREATE TABLE t(x); INSERT INTO t VALUES (1);"
cp "$T/other.db" "$T/other.orig"
expect query_foreign_sqlite 1 query --db "$T/other.db"
has query_foreign_sqlite_message "$T/err" "another program"
cmp -s "$T/other.db" "$T/other.orig" && ok foreign_untouched || bad foreign_untouched

cur=$(sqlite3 "$T/a.orig" "PRAGMA user_version")
cp "$T/a.orig" "$T/newer.db"
sqlite3 "$T/newer.db" "PRAGMA user_version = $((cur + 1));"
cp "$T/newer.db" "$T/newer.orig"
expect query_newer_schema 1 query --db "$T/newer.db"
has query_newer_schema_message "$T/err" "newer normtune (schema $((cur + 1)), this build knows $cur)"

# a schema-1 file: reading commands refuse it and name `normtune migrate`,
# which brings it to the current schema; then it reads
cp "$T/a.orig" "$T/old.db"
sqlite3 "$T/old.db" "DROP VIEW best; DROP TABLE rematch; ALTER TABLE result DROP COLUMN reps; ALTER TABLE result DROP COLUMN traffic_gbps; ALTER TABLE sweep DROP COLUMN pid;
    DROP TABLE error; ALTER TABLE result ADD COLUMN err_dx REAL; ALTER TABLE result ADD COLUMN err_dw REAL;
    UPDATE shape SET dtype = 'bf16'; CREATE VIEW best AS SELECT * FROM result;
    PRAGMA user_version = 1;"
cp "$T/old.db" "$T/old.orig"
expect query_old_schema 1 query --db "$T/old.db"
has query_old_schema_message "$T/err" "normtune migrate --db"
cmp -s "$T/old.db" "$T/old.orig" && ok old_untouched_by_query || bad old_untouched_by_query
expect migrate_usage 2 migrate
expect migrate_old 0 migrate --db "$T/old.db"
[ "$(sqlite3 "$T/old.db" "PRAGMA user_version")" = "$cur" ] && ok migrated_version || bad migrated_version
expect query_after_migrate 0 query --db "$T/old.db"
expect merge_newer_schema 1 merge "$T/newer.db" "$T/a.db" -o "$T/m3.db"
cmp -s "$T/newer.db" "$T/newer.orig" && ok newer_untouched || bad newer_untouched

# --device means what it means for `run`: a name ignoring case, or a UUID
# or its first 8 or more characters; either names the GPU's model (name,
# compute capability, SMs, memory clock), whose GPUs' results are pooled
cp "$root/data/results.db" "$T/h200.db"
"$NORMTUNE" migrate --db "$T/h200.db" >/dev/null 2>&1   # the shipped file may be older
# (the shipped file has seven H200s of one model: the name, any GPU's uuid
# and the default all read the same pooled rows)
expect device_name_any_case 0 report --db "$T/a.db" --device "nvidia h200"
expect device_model_by_name 0 query --db "$T/h200.db" --device "nvidia h200" best
mv "$T/out" "$T/by_name"
expect device_model_by_old_gpu 0 query --db "$T/h200.db" --device gpu-3bf896bb best
cmp -s "$T/out" "$T/by_name" && ok device_model_same_rows || bad device_model_same_rows
expect device_model_default 0 query --db "$T/h200.db" best
cmp -s "$T/out" "$T/by_name" && ok device_model_default_same_rows ||
    bad device_model_default_same_rows "$(diff "$T/out" "$T/by_name" | head -5)"
expect device_uuid_too_short 1 report --db "$T/h200.db" --device GPU-3bf
expect device_wrong_uuid 1 report --db "$T/h200.db" --device GPU-3bf896bc

# two GPUs of one model pool; a third of another model (the same name, other
# SMs) does not: its name is ambiguous, any case, and a uuid picks the model
mkdb "$T/g2.db" GPU-2222 "NVIDIA H200" && mkdb "$T/g3.db" GPU-3333 "NVIDIA H200" 114 &&
    sqlite3 "$T/g2.db" "UPDATE result SET median_us = 15.0 WHERE id = 1; UPDATE result SET
        median_us = 25.0 WHERE id = 2; UPDATE result SET status = 'ok', message = '',
        median_us = 5.0 WHERE id = 3" &&
    sqlite3 "$T/g3.db" "UPDATE result SET median_us = 1.0 WHERE id = 2" &&
    ok model_fixtures || bad model_fixtures
expect merge_model 0 merge "$T/a.db" "$T/g2.db" -o "$T/m12.db"
expect merge_model_other 0 merge "$T/m12.db" "$T/g3.db" -o "$T/m123.db"
expect pool_report 0 report --db "$T/m12.db"
has pool_report_gpus "$T/out" "the results of its 2 GPUs in the database ranked together"
# A's persistent 20 us against B's naive 15 us and B's 64x8 persistent 5 us
has pool_report_row "$T/out" "| 4096 | 2048 | persistent | block=64,chunks=8,stages=1,k=0 | 5.00 |"
expect pool_shape 0 query --db "$T/m12.db" shape 4096 2048 --device GPU-1
grep -Eq '^ +1 +rmsnorm_bwd +bf16 +rmsnorm_bwd.persistent +block=64,chunks=8,stages=1,k=0 +ok +5.00 .* GPU-2222 ' "$T/out" &&
    ok pool_shape_first || bad pool_shape_first "$(cat "$T/out")"
[ "$(grep -c ' ok ' "$T/out")" = 5 ] && ok pool_shape_both_gpus || bad pool_shape_both_gpus "$(cat "$T/out")"
has pool_shape_gpu_column "$T/out" "GPU-2222"
expect device_name_ambiguous 1 report --db "$T/m123.db" --device "nvidia h200"
has device_name_ambiguous_message "$T/err" "device 'nvidia h200' is ambiguous"
has device_name_ambiguous_names "$T/err" "132 SMs, memory clock 2619000 kHz: GPU-1, GPU-2222); NVIDIA H200 (cc 9.0, 114 SMs"
expect other_model_by_uuid 0 query --db "$T/m123.db" --device GPU-3333 best
has other_model_alone "$T/out" " 1.00 "
expect pooled_model_by_uuid 0 query --db "$T/m123.db" --device GPU-2222 best
has pooled_model_best "$T/out" " 5.00 "
grep -q " 1.00 " "$T/out" && bad pooled_model_not_other "$(cat "$T/out")" || ok pooled_model_not_other
expect every_model 0 query --db "$T/m123.db" best
[ "$(grep -c "NVIDIA H200" "$T/out")" = 2 ] && ok every_model_rows || bad every_model_rows "$(cat "$T/out")"

rm -rf "$T"
echo "RESULT $passed $failed"
[ "$failed" = 0 ]
