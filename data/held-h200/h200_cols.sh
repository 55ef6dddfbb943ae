#!/bin/sh
# h200_cols.sh -- the shortest H200 call that moves the header: the fill of
# cols beside the default backward at M = 256 (data/cols256-h100/fill.sh)
# with the patched cols of COLS_TAR (data/colsown-h100/cols_pre.patch), then
# `make bench` of the shipped header (no peers).  For a call with less
# device time than h200_all.sh needs.  Refuses any GPU but an H200.
#   here:  as h200_all.sh says (.devbuild/bin.tar.xz, .devbuild/cols.tar.xz)
#   there: COLS_TAR=.devbuild/cols.tar.xz sh data/held-h200/h200_cols.sh .devbuild/bin.tar.xz
set -u
nvidia-smi --query-gpu=name,uuid,clocks.max.memory --format=csv > "$OUT/gpu.txt" 2>&1
case "$(cat "$OUT/gpu.txt")" in
*H200*) ;;
*) echo "h200_cols.sh: not an H200 (gpu.txt)"; exit 1 ;;
esac
mkdir -p build colsbuild && tar -xJf "$1" -C build && tar -xJf "$COLS_TAR" -C colsbuild || exit 1
sh data/cols256-h100/fill.sh > cols256.lua &&
    timeout 150 colsbuild/normtune run cols256.lua --db "$OUT/cols256.db" > "$OUT/cols256_fill.log" 2>&1
echo "rc=$?" >> "$OUT/cols256_fill.log"
xz -T4 -6 "$OUT/cols256.db"
mkdir -p "$OUT/bench"
timeout 150 make bench NOBUILD=1 BENCH_PEERS=0 BENCH_OUT="$OUT/bench" > "$OUT/bench/bench_run.log" 2>&1
echo "rc=$?" >> "$OUT/bench/bench_run.log"
tar -cJf "$OUT/bench.tar.xz" -C "$OUT" bench && rm -rf "$OUT/bench"
tail -n 3 "$OUT/cols256_fill.log"
