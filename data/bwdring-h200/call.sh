#!/bin/sh
# call.sh -- the device call ring.lua waits for: rmsnorm_bwd.ring's GPU
# tests (test_kernels: float64 and bitwise at every dtype combination;
# compute-sanitizer memcheck and racecheck), then ring.lua's run beside
# persistent and held and its report, logs and the database under $OUT,
# tarred into $OUT/bwdring.tar.xz.  Any GPU (gpu.txt names it; an H100's
# results are a model of their own and stay out of data/results.db).
#   here:  make build/normtune build/gpu/test_kernels && mkdir -p .devbuild &&
#          tar -cJf .devbuild/bin.tar.xz -C build normtune gpu/test_kernels ...
#   there: sh data/bwdring-h200/call.sh .devbuild/bin.tar.xz
set -u
[ -x build/normtune ] || { mkdir -p build && tar -xJf "$1" -C build; } || exit 1
L=$OUT/bwdring
mkdir -p "$L"
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,clocks.max.memory --format=csv,noheader > "$L/gpu.txt"
t0=$(date +%s)
( timeout 150 build/gpu/test_kernels --family rmsnorm_bwd.ring > "$L/test_kernels_ring.log" 2>&1
  echo "rc=$?" >> "$L/test_kernels_ring.log" ) &
SANITIZE_FAMILIES=rmsnorm_bwd.ring SANITIZE_TIMEOUT=150 sh tests/gpu/sanitize.sh build/gpu/test_kernels \
    > "$L/sanitize.log" 2>&1
echo "rc=$?" >> "$L/sanitize.log"
wait
echo "tests: $(( $(date +%s) - t0 )) s" > "$L/times.txt"
timeout "${RUN_LIMIT:-240}" build/normtune run data/bwdring-h200/ring.lua --db "$L/ring.db" --settle 5 \
    > "$L/ring_run.log" 2>&1
echo "rc=$?" >> "$L/ring_run.log"
echo "all: $(( $(date +%s) - t0 )) s" >> "$L/times.txt"
build/normtune report --db "$L/ring.db" > "$L/ring_report.txt" 2>&1
for sh in "8192 4096" "8192 16384" "12288 4096" "12288 16384" "16384 4096" "16384 8192"; do
    build/normtune query --db "$L/ring.db" shape $sh
done > "$L/ring_shapes.txt" 2>&1
xz -9 "$L/ring.db"
tail -n 3 "$L/test_kernels_ring.log" "$L/sanitize.log" "$L/ring_run.log"
cat "$L/times.txt"
tar -cJf "$OUT/bwdring.tar.xz" -C "$OUT" bwdring && rm -rf "$L"
