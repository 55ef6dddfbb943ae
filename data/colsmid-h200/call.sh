#!/bin/sh
# call.sh -- the H200 call for the shipped header with `cols` at M = 256
# (../colspatch-h200/call.sh's tests all passed on an H100,
# ../colspatch-h200/run-h100/; it unpacks the binaries unless build/ has
# them from a call before on a machine still warm): make bench of the shipped header with cols's loads before the wait
# (no peers), then the fill that says where `cols` wins at M = 512
# (unpatched, in data/results.db, it lost by 19% and 23% at 1024 x 4096
# and 1024 x 8192, by 52% at 2048 x 8192; colsmid.lua, written here by
# ../cols256-h100/fill.sh shapes.txt: the default backward's families and
# `cols` at the grid's 16 hidden sizes, 2249 variants).  Logs
# and the database under $OUT, tarred into $OUT/colsmid.tar.xz.
# Before them, the bench at M = 256 by the grid's 16 hidden sizes
# (build/gpu/bench --shapes, about 10 s), the H200 figure
# ../colspatch-h200/call.sh gave only on an H100.  On a GPU that is not an
# H200 it stops at once with exit 3 (ANY_GPU=1: runs anyway; its results
# are then of another model, not for results.db).  Then, here:
# sh data/colsmid-h200/merge.sh colsmid.db.xz (about 2 minutes of device
# time in all: the H100 took 19 s for make bench and 63 s for the fill).
#   there: sh data/colsmid-h200/call.sh .devbuild/bin.tar.xz
set -u
if [ "${ANY_GPU:-0}" != 1 ] && ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    echo "call.sh: not an H200 ($(nvidia-smi --query-gpu=name --format=csv,noheader)); ANY_GPU=1 runs anyway" >&2
    exit 3
fi
[ -x build/normtune ] || { mkdir -p build && tar -xJf "$1" -C build; } || exit 1
L=$OUT/colsmid
mkdir -p "$L"
nvidia-smi --query-gpu=name,uuid,clocks.max.memory --format=csv > "$L/gpu.txt"
t0=$(date +%s)
stamp() { echo "$1: $(( $(date +%s) - t0 )) s" >> "$L/times.txt"; }
grep -v '^#' data/cols256-h100/shapes.txt > "$L/shapes256.txt"   # M = 256 by the grid's 16 N
timeout 60 build/gpu/bench --shapes "$L/shapes256.txt" > "$L/bench256.txt" 2>&1
echo "rc=$?" >> "$L/bench256.txt"
stamp bench256
timeout "${BENCH_LIMIT:-200}" make bench NOBUILD=1 BENCH_PEERS=0 BENCH_OUT="$L/bench" > "$L/bench.log" 2>&1
echo "rc=$?" >> "$L/bench.log"
stamp bench
sh data/cols256-h100/fill.sh data/colsmid-h200/shapes.txt > "$L/colsmid.lua" || exit 1
timeout "${FILL_LIMIT:-300}" build/normtune run "$L/colsmid.lua" --db "$L/colsmid.db" \
    > "$L/colsmid_fill.log" 2>&1
echo "rc=$?" >> "$L/colsmid_fill.log"
stamp fill
xz -9 "$L/colsmid.db"
tar -cJf "$OUT/colsmid.tar.xz" -C "$OUT" colsmid
tail -n 4 "$L/bench256.txt" "$L/bench.log" "$L/colsmid_fill.log"
cat "$L/times.txt"
