#!/bin/sh
# test_format.sh -- `query` and `report` with --format table|csv|json and
# -o FILE: CSV read back by the sqlite3 shell's RFC 4180 importer, JSON
# checked by SQLite's json_valid/json_extract (a device name with quotes
# and a comma, a NULL finish time), -o written atomically and never over a
# database, usage errors.
#
# Needs NORMTUNE, NT_TMP and the sqlite3 shell (a build dependency).
NAME=test_format
. "$(dirname "$0")/lib.sh"

# one device whose name needs quoting in CSV and escaping in JSON, a done
# sweep and a running one (finished NULL), one shape N=4096 M=2048 with a
# naive result (40 us) and a persistent one (20 us)
db="$T/f.db"
sqlite3 "$db" <"$root/db/schema.sql" && sqlite3 "$db" <<'EOF'
INSERT INTO device VALUES (1, 'NVIDIA "H200", rev\2', 9, 0, 132, 62914560, 1980000,
    2619000, 6144, '570.86', '12.8', '13.0', 'GPU-1');
INSERT INTO sweep VALUES (1, 'sweeps/x.lua', 'h1', '2025-01-01T00:00:00.000Z',
    '2025-01-01T01:00:00.000Z', 1, 'done', 4000.0, 'h', NULL),
    (2, 'sweeps/y.lua', 'h2', '2025-01-02T00:00:00.000Z', NULL, 1, 'running', NULL, 'h', NULL);
INSERT INTO variant VALUES (1, 'rmsnorm_bwd.naive', 'nsplit=64,partial=f32', 'abc'),
    (2, 'rmsnorm_bwd.persistent', 'block=256,chunks=2,stages=2,k=0', 'abc');
INSERT INTO shape VALUES (1, 'rmsnorm_bwd', 'bf16', 2048, 4096);
INSERT INTO result(id, sweep_id, variant_id, shape_id, device_id, warmup,
    min_samples, max_samples, rel_ci, status, message, median_us, p10_us, p90_us,
    n_samples, bytes, gbps, pct_copy, created) VALUES
  (1, 1, 1, 1, 1, 10, 20, 200, 0.01, 'ok', '', 40.0, 39.0, 41.0, 0, 33554432,
   838.86, 20.97, '2025-01-01T00:10:00.000Z'),
  (2, 1, 2, 1, 1, 10, 20, 200, 0.01, 'ok', '', 20.0, 19.5, 20.5, 0, 33554432,
   1677.72, 41.94, '2025-01-01T00:20:00.000Z');
EOF
[ $? = 0 ] && ok fixture || bad fixture
cp "$db" "$T/f.orig"

# sql FILE QUERY: run QUERY with the file's text as :j (via readfile)
js() { sqlite3 :memory: "SELECT $2 FROM (SELECT readfile('$1') AS j)"; }
# csvq FILE QUERY: import FILE as table t (first line: column names)
csvq() { sqlite3 :memory: ".import --csv $1 t" "$2"; }
eq() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "got '$2', want '$3'"; fi; }

# ---- table stays the default ----------------------------------------------------
expect table_default 0 query --db "$db"
has table_default_row "$T/out" "rmsnorm_bwd.persistent  block=256,chunks=2,stages=2,k=0  20.00  1677.7    41.9       2"
expect table_explicit 0 query --db "$db" --format table
has table_explicit_row "$T/out" "rmsnorm_bwd.persistent  block=256,chunks=2,stages=2,k=0  20.00  1677.7    41.9       2"

# ---- CSV ---------------------------------------------------------------------------
expect csv_best 0 query --db "$db" --format csv
eq csv_header "$(head -1 "$T/out")" "device,op,dtype,N,M,family,params,us,GB/s,% copy,result"
has csv_quoted "$T/out" '"NVIDIA ""H200"", rev\2",rmsnorm_bwd,bf16,4096,2048,rmsnorm_bwd.persistent,"block=256,chunks=2,stages=2,k=0",20.00,1677.7,41.9,2'
cp "$T/out" "$T/best.csv"
eq csv_reads_back "$(csvq "$T/best.csv" "SELECT device || '|' || params || '|' || \"GB/s\" FROM t")" \
    'NVIDIA "H200", rev\2|block=256,chunks=2,stages=2,k=0|1677.7'
eq csv_one_header "$(wc -l <"$T/best.csv" | tr -d ' ')" 2
expect csv_sweeps 0 query --db "$db" sweeps --format csv
# the running sweep: finished and copy GB/s are NULL -> empty fields
cp "$T/out" "$T/sweeps.csv"
has csv_null_line "$T/sweeps.csv" ',sweeps/y.lua,2025-01-02T00:00:00.000Z,,running,,0,0'
eq csv_null_fields "$(csvq "$T/sweeps.csv" "SELECT finished = '' AND \"copy GB/s\" = '' FROM t WHERE sweep = '2'")" 1
expect csv_shape 0 query --db "$db" --format csv shape 4096 2048
eq csv_shape_rows "$(csvq "$T/out" "SELECT group_concat(rank || ':' || family, ' ') FROM t")" \
    "1:rmsnorm_bwd.persistent 2:rmsnorm_bwd.naive"

# ---- JSON --------------------------------------------------------------------------
expect json_best 0 query --db "$db" --format json
cp "$T/out" "$T/best.json"
eq json_valid "$(js "$T/best.json" "json_valid(j)")" 1
eq json_array_len "$(js "$T/best.json" "json_array_length(j)")" 1
eq json_device_escaped "$(js "$T/best.json" "json_extract(j, '\$[0].device')")" 'NVIDIA "H200", rev\2'
eq json_N_number "$(js "$T/best.json" "json_type(j, '\$[0].N') || ' ' || json_extract(j, '\$[0].N')")" "integer 4096"
eq json_gbps_number "$(js "$T/best.json" "json_type(j, '\$[0].\"GB/s\"')")" "real"
eq json_params_text "$(js "$T/best.json" "json_type(j, '\$[0].params')")" "text"
expect json_sweeps 0 query --db "$db" --format json sweeps
cp "$T/out" "$T/sweeps.json"
eq json_sweeps_valid "$(js "$T/sweeps.json" "json_valid(j)")" 1
eq json_null "$(js "$T/sweeps.json" "json_type(j, '\$[1].finished') || ' ' || json_type(j, '\$[1].\"copy GB/s\"') || ' ' || json_type(j, '\$[0].\"copy GB/s\"')")" "null null real"
expect json_samples_empty 0 query --db "$db" --format json samples 1
eq json_empty_array "$(js "$T/out" "json_valid(j) || json_array_length(j)")" 10

# ---- report --------------------------------------------------------------------------
expect report_md_default 0 report --db "$db"
has report_md_title "$T/out" '## normtune report: NVIDIA "H200", rev\2'
expect report_csv 0 report --db "$db" --format csv
eq report_csv_header "$(head -1 "$T/out")" "device,N,M,op,dtype,family,params,us,GB/s,% copy,% op,runner-up,runner-up/best"
eq report_csv_row "$(csvq "$T/out" "SELECT N || ' ' || M || ' ' || family || ' ' || \"runner-up\" || ' ' || \"runner-up/best\" FROM t")" \
    "4096 2048 persistent naive 2.00"
expect report_json 0 report --db "$db" --format json
eq report_json_ratio "$(js "$T/out" "json_valid(j) || ' ' || json_extract(j, '\$[0].\"runner-up/best\"') || ' ' || json_extract(j, '\$[0].family')")" "1 2.0 persistent"

# ---- -o FILE -------------------------------------------------------------------------
expect out_file 0 query --db "$db" --format json -o "$T/o.json"
[ ! -s "$T/out" ] && ok out_file_not_stdout || bad out_file_not_stdout "$(head -c 200 "$T/out")"
cmp -s "$T/o.json" "$T/best.json" && ok out_file_same || bad out_file_same
expect report_out_file 0 report --db "$db" -o "$T/r.md"
has report_out_file_text "$T/r.md" "| persistent |"
expect out_db_refused 1 query --db "$db" -o "$db"
has out_db_refused_msg "$T/err" "refusing"
expect report_out_db_refused 1 report --db "$db" --format csv --output "$db"
cp "$T/f.orig" "$T/other.db"
expect out_other_db_refused 1 query --db "$db" --format csv -o "$T/other.db"
cmp -s "$db" "$T/f.orig" && cmp -s "$T/other.db" "$T/f.orig" && ok dbs_untouched || bad dbs_untouched
echo keep >"$T/keep.csv"
expect out_failed_query 1 query --db "$db" --format csv -o "$T/keep.csv" shape 99 99
eq out_failed_untouched "$(cat "$T/keep.csv")" keep
eq out_no_temp_left "$(ls "$T" | grep -c '\.tmp\.')" 0

# ---- usage ---------------------------------------------------------------------------
expect bad_format 2 query --db "$db" --format xml
has bad_format_msg "$T/err" "table, csv or json"
expect report_bad_format 2 report --db "$db" --format yaml
expect format_no_value 2 query --db "$db" --format
expect query_help_format 0 query --help
has query_help_format_text "$T/out" "--format F"
expect report_help_format 0 report --help
has report_help_format_text "$T/out" "--format F"

finish
[ "$failed" = 0 ]
