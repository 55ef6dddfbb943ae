#!/bin/sh
# call.sh -- the second H200 call after ../colspatch-h200/call.sh (the same
# binaries, already unpacked in build/ when the machine is still warm):
# make bench of the shipped header with cols's loads before the wait
# (no peers), then the fill that says where `cols` wins at M = 512
# (unpatched, in data/results.db, it lost by 19% and 23% at 1024 x 4096
# and 1024 x 8192, by 52% at 2048 x 8192; colsmid.lua, written here by
# ../cols256-h100/fill.sh shapes.txt: the default backward's families and
# `cols` at the grid's 16 hidden sizes, 2249 variants).  Logs
# and the database under $OUT, tarred into $OUT/colsmid.tar.xz.
#   there: sh data/colsmid-h200/call.sh .devbuild/bin.tar.xz
set -u
[ -x build/normtune ] || { mkdir -p build && tar -xJf "$1" -C build; } || exit 1
L=$OUT/colsmid
mkdir -p "$L"
nvidia-smi --query-gpu=name,uuid,clocks.max.memory --format=csv > "$L/gpu.txt"
t0=$(date +%s)
stamp() { echo "$1: $(( $(date +%s) - t0 )) s" >> "$L/times.txt"; }
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
tail -n 4 "$L/bench.log" "$L/colsmid_fill.log"
cat "$L/times.txt"
