#!/bin/sh
# test_plot.sh -- `normtune plot`: a fixture database (3 N x 2 M, two naive
# and two persistent variants per shape, one wrong result) drawn as SVG and
# PNG in every --kind, a CSV written by `query --format csv` drawn,
# negative values drawn, --yrange, --title and --ylabel, and the errors: usage (exit 2), an empty database, no rows, -o
# naming the database, gnuplot missing or failing (exit 1, nothing written,
# no temporary files left).  Texts from the data reach gnuplot quoted: a
# device name with quotes and backquotes is drawn, not run.
#
# gnuplot is a build dependency (make installs gnuplot-nox): without it the
# plot checks FAIL rather than skip.  Needs NORMTUNE, NT_TMP, sqlite3.
NAME=test_plot
. "$(dirname "$0")/lib.sh"

command -v gnuplot >/dev/null 2>&1 && ok gnuplot_installed ||
    bad gnuplot_installed "gnuplot not found: install the Debian package gnuplot-nox (make deps)"

# svg NAME FILE: FILE looks like an SVG document
svg() {
    if head -c 200 "$2" | grep -q '^<?xml\|^<svg' && tail -c 20 "$2" | grep -q '</svg>'; then
        ok "$1"
    else
        bad "$1" "not SVG: $(head -c 100 "$2" 2>/dev/null)"
    fi
}

db="$T/p.db"
dev="NVIDIA H200 it's \`touch $T/pwned\`"
sqldev=$(printf '%s' "$dev" | sed "s/'/''/g")
sqlite3 "$db" <"$root/db/schema.sql" && sqlite3 "$db" <<EOF
INSERT INTO device VALUES (1, '$sqldev', 9, 0, 132, 62914560, 1980000, 2619000,
    6144, '570.86', '12.8', '13.0', 'GPU-1');
INSERT INTO sweep VALUES (1, 'sweeps/x.lua', 'h1', '2025-01-01T00:00:00.000Z',
    '2025-01-01T01:00:00.000Z', 1, 'done', 4000.0, 'h', NULL);
INSERT INTO variant VALUES (1, 'rmsnorm_bwd.naive', 'nsplit=32', 'abc'),
    (2, 'rmsnorm_bwd.naive', 'nsplit=64', 'abc'),
    (3, 'rmsnorm_bwd.persistent', 'block=256', 'abc'),
    (4, 'rmsnorm_bwd.persistent', 'block=512', 'abc'),
    (5, 'rmsnorm_bwd.persistent', 'block=1024', 'abc');
INSERT INTO shape VALUES (1, 'rmsnorm_bwd', 'bf16', 1024, 1024),
    (2, 'rmsnorm_bwd', 'bf16', 1024, 2048), (3, 'rmsnorm_bwd', 'bf16', 1024, 4096),
    (4, 'rmsnorm_bwd', 'bf16', 8192, 1024), (5, 'rmsnorm_bwd', 'bf16', 8192, 2048),
    (6, 'rmsnorm_bwd', 'bf16', 8192, 4096);
INSERT INTO result(sweep_id, variant_id, shape_id, device_id, warmup, min_samples,
    max_samples, rel_ci, status, message, median_us, n_samples, bytes, gbps,
    pct_copy, created)
  SELECT 1, v.id, s.id, 1, 10, 20, 200, 0.01, CASE v.id WHEN 5 THEN 'wrong' ELSE 'ok' END,
    '', 10.0, 0, 1e6, 1000 + s.N / 16.0 + s.M / 64.0 + v.id * 100,
    (1000 + s.N / 16.0 + s.M / 64.0 + v.id * 100) / 40.0, '2025-01-01T00:10:00.000Z'
  FROM shape s, variant v;
EOF
[ $? = 0 ] && ok fixture || bad fixture
cp "$db" "$T/p.orig"
mkdir -p "$T/tmp"
export TMPDIR="$T/tmp"

# ---- the figures ------------------------------------------------------------------
expect plot_bw 0 plot --db "$db" -o "$T/bw.svg"
svg plot_bw_svg "$T/bw.svg"
for m in 1024 8192; do
    for f in naive persistent; do has "plot_bw_legend_${m}_$f" "$T/bw.svg" "M=$m $f"; done
done
has plot_bw_copy_line "$T/bw.svg" "device-to-device copy, 4000 GB/s"
has plot_bw_title_date "$T/bw.svg" "results of 2025-01-01"
has plot_bw_axis "$T/bw.svg" "N (row length, elements; log2 scale)"
for n in 1024 2048 4096; do has "plot_bw_xtic_$n" "$T/bw.svg" ">$n<"; done
has plot_device_quoted "$T/bw.svg" "NVIDIA H200 it's \`touch"
[ ! -e "$T/pwned" ] && ok plot_backquotes_not_run || bad plot_backquotes_not_run
cmp -s "$db" "$T/p.orig" && ok plot_db_untouched || bad plot_db_untouched

expect plot_pct 0 plot --db "$db" --kind pct -o "$T/pct.svg"
svg plot_pct_svg "$T/pct.svg"
has plot_pct_axis "$T/pct.svg" "% of the measured copy bandwidth"
has plot_pct_line "$T/pct.svg" "device-to-device copy (100%)"

expect plot_spread 0 plot --db "$db" --kind spread --device GPU-1 -o "$T/spread.svg"
svg plot_spread_svg "$T/spread.svg"
has plot_spread_best "$T/spread.svg" "best of the shape"
has plot_spread_shape "$T/spread.svg" "2048 x 8192"
has plot_spread_family "$T/spread.svg" ">persistent<"

expect plot_png 0 plot --db "$db" -o "$T/bw.png"
[ "$(head -c 4 "$T/bw.png" | tail -c 3)" = PNG ] && ok plot_png_magic || bad plot_png_magic

(cd "$T" && "$NORMTUNE" plot --db p.db >/dev/null 2>&1) && [ -s "$T/plot.svg" ] &&
    ok plot_default_output || bad plot_default_output

# a CSV that query writes, by column names and by default columns
"$NORMTUNE" query --db "$db" --format csv >"$T/best.csv"
expect plot_csv 0 plot --csv "$T/best.csv" --x N --y "GB/s,% copy" --logx -o "$T/csv.svg"
svg plot_csv_svg "$T/csv.svg"
has plot_csv_series "$T/csv.svg" "% copy"
has plot_csv_xlabel "$T/csv.svg" ">N<"
expect plot_csv_by 0 plot --csv "$T/best.csv" --x N --y GB/s --by M --logx -o "$T/by.svg"
has plot_csv_by_1024 "$T/by.svg" ">M=1024<"
has plot_csv_by_8192 "$T/by.svg" ">M=8192<"
expect plot_csv_by_unknown 1 plot --csv "$T/best.csv" --by Q -o "$T/x.svg"
expect plot_by_with_db 2 plot --db "$db" --by M
expect plot_csv_default_cols 0 plot --csv "$T/best.csv" -o "$T/csv2.svg"
has plot_csv_default_series "$T/csv2.svg" ">result<"
printf 'size,"time, us"\n1,2.5\n2,\n4,9\n' >"$T/m.csv"
expect plot_csv_quoted_header 0 plot --csv "$T/m.csv" -o "$T/m.svg"
has plot_csv_quoted_header_text "$T/m.svg" "time, us"

eq_empty_tmp() {
    if [ -z "$(ls -A "$T/tmp")" ]; then ok "$1"; else bad "$1" "left: $(ls "$T/tmp")"; fi
}
eq_empty_tmp plot_no_temp_files

# ---- errors ---------------------------------------------------------------------------
expect plot_help 0 plot --help
has plot_help_text "$T/out" "usage: normtune plot"
expect plot_no_input 2 plot -o "$T/x.svg"
expect plot_both_inputs 2 plot --db "$db" --csv "$T/best.csv"
expect plot_bad_kind 2 plot --db "$db" --kind pie
has plot_bad_kind_msg "$T/err" "bw, pct or spread"
expect plot_bad_ext 2 plot --db "$db" -o "$T/x.pdf"
has plot_bad_ext_msg "$T/err" ".svg or .png"
expect plot_bad_option 2 plot --db "$db" --frobnicate
expect plot_extra_arg 2 plot --db "$db" extra
expect plot_csv_with_kind 2 plot --csv "$T/best.csv" --kind bw
expect plot_x_with_db 2 plot --db "$db" --x N

expect plot_missing_db 1 plot --db "$T/nope.db" -o "$T/x.svg"
[ ! -e "$T/nope.db" ] && ok plot_missing_not_created || bad plot_missing_not_created
sqlite3 "$T/empty.db" <"$root/db/schema.sql"
expect plot_empty_db 1 plot --db "$T/empty.db" -o "$T/x.svg"
has plot_empty_db_msg "$T/err" "no"
[ ! -e "$T/x.svg" ] && ok plot_empty_no_output || bad plot_empty_no_output
expect plot_unknown_device 1 plot --db "$db" --device A100 -o "$T/x.svg"

printf 'N,GB/s\n' >"$T/hdr.csv"
expect plot_csv_no_rows 1 plot --csv "$T/hdr.csv" -o "$T/x.svg"
has plot_csv_no_rows_msg "$T/err" "no rows"
expect plot_csv_not_numeric 1 plot --csv "$T/best.csv" --y family -o "$T/x.svg"
has plot_csv_not_numeric_msg "$T/err" "not numeric"
expect plot_csv_no_column 1 plot --csv "$T/best.csv" --x Q -o "$T/x.svg"
has plot_csv_no_column_msg "$T/err" "no column 'Q'"
# --yrange: the y axis where asked (data at 2.5..9; tics of 100..200 can come
# from nothing else), either bound left out, and bad ranges refused
expect plot_yrange 0 plot --csv "$T/m.csv" --yrange 100:200 -o "$T/yr.svg"
has plot_yrange_top "$T/yr.svg" "<text> 200</text>"
has plot_yrange_bottom "$T/yr.svg" "<text> 100</text>"
grep -qF "<text> 0</text>" "$T/yr.svg" && bad plot_yrange_no_zero || ok plot_yrange_no_zero
expect plot_yrange_hi_only 0 plot --csv "$T/m.csv" --yrange :50 -o "$T/yr2.svg"
has plot_yrange_hi_only_top "$T/yr2.svg" "<text> 50</text>"
has plot_yrange_hi_only_zero "$T/yr2.svg" "<text> 0</text>"
# left out, the bottom is 0, or the data's lowest value below 0 (a CSV of
# differences: nothing drawn below the axis is lost)
printf 'shape,gap\na,-12.5\nb,3\nc,-4\n' >"$T/neg.csv"
expect plot_negative 0 plot --csv "$T/neg.csv" -o "$T/neg.svg"
has plot_negative_bottom "$T/neg.svg" "<text>-12</text>"
expect plot_yrange_db 0 plot --db "$db" --kind pct --yrange 20: -o "$T/yr3.svg"
grep -qF "<text> 0</text>" "$T/yr3.svg" && bad plot_yrange_db_from_lo || ok plot_yrange_db_from_lo
for r in 90 a:b : 102:90 90:102:3 :-1 1e999: ""; do
    expect "plot_yrange_refused_${r:-empty}" 2 plot --csv "$T/m.csv" --yrange "$r" -o "$T/yr4.svg"
done
has plot_yrange_refused_msg "$T/err" "--yrange"
[ ! -e "$T/yr4.svg" ] && ok plot_yrange_refused_nothing_written || bad plot_yrange_refused_nothing_written
# --title and --ylabel replace the figure's own texts (the CSV's file name,
# the one column's name; the device line of a database figure), quoted on
# their way to gnuplot; a text over 190 bytes is refused and nothing drawn
expect plot_title 0 plot --csv "$T/m.csv" --y 2 --title "Chosen 'title' \`touch $T/pwned2\`" \
    --ylabel "chosen y label" -o "$T/ti.svg"
has plot_title_drawn "$T/ti.svg" "Chosen"
has plot_ylabel_drawn "$T/ti.svg" "chosen y label"
grep -qF "m.csv" "$T/ti.svg" && bad plot_title_replaces "the file name is still drawn" ||
    ok plot_title_replaces
[ ! -e "$T/pwned2" ] && ok plot_title_not_run || bad plot_title_not_run "the backquotes ran"
expect plot_title_db 0 plot --db "$db" --title "a database figure" -o "$T/ti2.svg"
has plot_title_db_drawn "$T/ti2.svg" "a database figure"
grep -qF "results of" "$T/ti2.svg" && bad plot_title_db_replaces || ok plot_title_db_replaces
long=$(printf '%0191d' 0)
expect plot_title_too_long 2 plot --csv "$T/m.csv" --title "$long" -o "$T/ti3.svg"
has plot_title_too_long_msg "$T/err" "--title: 191 bytes, at most 190"
expect plot_ylabel_too_long 2 plot --csv "$T/m.csv" --ylabel "$long" -o "$T/ti3.svg"
[ ! -e "$T/ti3.svg" ] && ok plot_title_too_long_nothing_written ||
    bad plot_title_too_long_nothing_written
expect plot_title_at_limit 0 plot --csv "$T/m.csv" --title "$(printf '%0190d' 0)" -o "$T/ti4.svg"
printf 'a,b\n"1,2\n' >"$T/bad.csv"
expect plot_csv_malformed 1 plot --csv "$T/bad.csv" -o "$T/x.svg"
expect plot_csv_missing 1 plot --csv "$T/none.csv" -o "$T/x.svg"

expect plot_out_is_db 1 plot --db "$db" -o "$db"
has plot_out_is_db_msg "$T/err" "refusing"
cmp -s "$db" "$T/p.orig" && ok plot_out_db_untouched || bad plot_out_db_untouched
cp "$T/p.orig" "$T/other.svg"
expect plot_out_other_sqlite 1 plot --db "$db" -o "$T/other.svg"
cmp -s "$T/other.svg" "$T/p.orig" && ok plot_out_other_untouched || bad plot_out_other_untouched
expect plot_out_is_csv 1 plot --csv "$T/m.csv" -o "$T/m.csv"

# gnuplot missing, and gnuplot failing: clear messages, old output kept
mkdir -p "$T/nobin" "$T/fakebin"
cp "$T/bw.svg" "$T/keep.svg"
oldpath=$PATH
PATH="$T/nobin"
expect plot_no_gnuplot 1 plot --db "$db" -o "$T/keep.svg"
PATH=$oldpath
has plot_no_gnuplot_msg "$T/err" "gnuplot not found: install the Debian package gnuplot-nox"
printf '#!/bin/sh\necho "line 3: boom: invalid command" >&2\nexit 1\n' >"$T/fakebin/gnuplot"
chmod +x "$T/fakebin/gnuplot"
PATH="$T/fakebin:$oldpath"
expect plot_gnuplot_fails 1 plot --db "$db" -o "$T/keep.svg"
PATH=$oldpath
has plot_gnuplot_fails_stderr "$T/err" "boom: invalid command"
cmp -s "$T/keep.svg" "$T/bw.svg" && ok plot_failed_output_kept || bad plot_failed_output_kept
eq_empty_tmp plot_failed_no_temp_files
[ -z "$(ls "$T" | grep '\.tmp\.')" ] && ok plot_no_partial_output || bad plot_no_partial_output

finish
[ "$failed" = 0 ]
