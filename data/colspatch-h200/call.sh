#!/bin/sh
# call.sh -- the H200 call for `rmsnorm_bwd.cols` with
# data/colsown-h100/cols_pre.patch applied and its M = 256 results
# (../cols256-h200/) merged: cols's GPU tests (float64 and determinism at
# every dtype combination, memcheck and racecheck), the library of the
# header exported from the merged database (test_lib: correctness of every
# tuned and stretched config, threads, speed), and that library's bench
# at M = 256 by the grid's 16 hidden sizes.  Logs under $OUT.
#   here:  make bench-build build/normtune build/gpu/test_kernels build/gpu/test_lib &&
#          tar -cJf .devbuild/bin.tar.xz -C build normtune gpu/test_kernels gpu/bench
#          gpu/test_lib libnormtune.so
#   there: sh data/colspatch-h200/call.sh .devbuild/bin.tar.xz
set -u
mkdir -p build && tar -xJf "$1" -C build || exit 1
nvidia-smi --query-gpu=name,uuid,clocks.max.memory --format=csv > "$OUT/gpu.txt"
t0=$(date +%s)
timeout 120 build/gpu/test_kernels --family rmsnorm_bwd.cols > "$OUT/test_kernels_cols.log" 2>&1
echo "rc=$?" >> "$OUT/test_kernels_cols.log"
echo "test_kernels: $(( $(date +%s) - t0 )) s" > "$OUT/times.txt"
SANITIZE_FAMILIES=rmsnorm_bwd.cols NORMTUNE=build/normtune timeout 150 \
    sh tests/gpu/sanitize.sh build/gpu/test_kernels > "$OUT/sanitize_cols.log" 2>&1
echo "rc=$?" >> "$OUT/sanitize_cols.log"
echo "sanitize: $(( $(date +%s) - t0 )) s" >> "$OUT/times.txt"
for n in 1024 1536 2048 2560 2880 3072 3584 4096 5120 6144 7168 8192 11008 12288 14336 16384; do
    echo "256 $n"
done > "$OUT/shapes256.txt"
timeout 60 build/gpu/bench --shapes "$OUT/shapes256.txt" > "$OUT/bench256.txt" 2>&1
echo "rc=$?" >> "$OUT/bench256.txt"
echo "bench: $(( $(date +%s) - t0 )) s" >> "$OUT/times.txt"
NORMTUNE_DISPATCH=kernels/normtune_dispatch.h timeout "${LIB_LIMIT:-200}" build/gpu/test_lib \
    > "$OUT/test_lib.log" 2>&1
echo "rc=$?" >> "$OUT/test_lib.log"
echo "all: $(( $(date +%s) - t0 )) s" >> "$OUT/times.txt"
tail -n 3 "$OUT/test_kernels_cols.log" "$OUT/sanitize_cols.log" "$OUT/test_lib.log"
cat "$OUT/times.txt"
