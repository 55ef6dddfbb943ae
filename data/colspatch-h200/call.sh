#!/bin/sh
# call.sh -- the H200 call for `rmsnorm_bwd.cols` with its loads before the
# wait (data/colsown-h100/cols_pre.patch, applied in 6d02611) and its M =
# 256 results (../cols256-h200/) merged, in this order: cols's GPU tests
# (float64 and determinism at every dtype combination); the library of the
# header exported from the merged database at M = 256 by the grid's 16
# hidden sizes (build/gpu/bench --shapes), and its test_lib (correctness of
# every tuned and stretched config, threads, speed); the device fill and
# every family's GPU tests under the runner's new check (inputs drawn again
# right before each validated chain); cols's memcheck and racecheck.  Logs
# under $OUT, tarred into $OUT/logs.tar.xz.  make bench and the fill at
# M = 512 follow in ../colsmid-h200/call.sh (a call is at most 10 minutes).
#   here:  make bench-build build/normtune build/gpu/test_kernels build/gpu/test_lib \
#            build/gpu/test_dref &&
#          tar -cJf .devbuild/bin.tar.xz -C build normtune gpu/test_kernels gpu/bench
#            gpu/test_lib gpu/test_dref libnormtune.so
#   there: sh data/colspatch-h200/call.sh .devbuild/bin.tar.xz
set -u
mkdir -p build && tar -xJf "$1" -C build || exit 1
L=$OUT/logs
mkdir -p "$L"
nvidia-smi --query-gpu=name,uuid,clocks.max.memory --format=csv > "$L/gpu.txt"
t0=$(date +%s)
# after each step: its time, and the logs so far tarred (a call cut short
# still brings them back)
stamp() {
    echo "$1: $(( $(date +%s) - t0 )) s" >> "$L/times.txt"
    tar -cJf "$OUT/logs.tar.xz.part" -C "$OUT" logs && mv "$OUT/logs.tar.xz.part" "$OUT/logs.tar.xz"
}
timeout 120 build/gpu/test_kernels --family rmsnorm_bwd.cols > "$L/test_kernels_cols.log" 2>&1
echo "rc=$?" >> "$L/test_kernels_cols.log"
stamp test_kernels_cols
grep -v '^#' data/cols256-h100/shapes.txt > "$L/shapes256.txt"   # M = 256 by the grid's 16 N
timeout 60 build/gpu/bench --shapes "$L/shapes256.txt" > "$L/bench256.txt" 2>&1
echo "rc=$?" >> "$L/bench256.txt"
stamp bench256
NORMTUNE_DISPATCH=kernels/normtune_dispatch.h timeout "${LIB_LIMIT:-200}" build/gpu/test_lib \
    > "$L/test_lib.log" 2>&1
echo "rc=$?" >> "$L/test_lib.log"
stamp test_lib
timeout 30 build/gpu/test_dref > "$L/test_dref.log" 2>&1
echo "rc=$?" >> "$L/test_dref.log"
timeout 150 build/gpu/test_kernels > "$L/test_kernels_all.log" 2>&1
echo "rc=$?" >> "$L/test_kernels_all.log"
stamp test_kernels_all
SANITIZE_FAMILIES=rmsnorm_bwd.cols NORMTUNE=build/normtune timeout 150 \
    sh tests/gpu/sanitize.sh build/gpu/test_kernels > "$L/sanitize_cols.log" 2>&1
echo "rc=$?" >> "$L/sanitize_cols.log"
stamp sanitize
tail -n 3 "$L/test_kernels_cols.log" "$L/sanitize_cols.log" "$L/test_lib.log" "$L/test_dref.log" \
    "$L/test_kernels_all.log"
cat "$L/times.txt"
