#!/bin/sh
# call.sh -- the device call ring.lua waits for: rmsnorm_fwd.ring's GPU
# tests (float64 and bitwise at every dtype combination; compute-sanitizer
# memcheck and racecheck), then ring.lua's run beside stage, logs under
# $OUT (about 5 minutes on an H200).
#   here:  make build/normtune build/gpu/test_kernels &&
#          mkdir -p .devbuild && tar -cJf .devbuild/bin.tar.xz -C build normtune gpu/test_kernels
#   there: sh data/ring-h200/call.sh .devbuild/bin.tar.xz
# then `normtune report --db $OUT/ring.db`: the best family per shape and
# the runner-up (ring or stage) with its time over the best.
set -u
mkdir -p build && tar -xJf "$1" -C build || exit 1
nvidia-smi --query-gpu=name,uuid,clocks.max.memory --format=csv > "$OUT/gpu.txt" 2>&1
L=$OUT/logs_ring
mkdir -p "$L"
t0=$(date +%s)
( timeout 120 build/gpu/test_kernels --family rmsnorm_fwd.ring > "$L/test_kernels_ring.log" 2>&1
  echo "rc=$?" >> "$L/test_kernels_ring.log" ) &
SANITIZE_FAMILIES=rmsnorm_fwd.ring SANITIZE_TIMEOUT=150 sh tests/gpu/sanitize.sh build/gpu/test_kernels \
    > "$L/sanitize.log" 2>&1
wait
echo "tests: $(( $(date +%s) - t0 )) s" > "$L/times.txt"
timeout 240 build/normtune run data/ring-h200/ring.lua --db "$OUT/ring.db" --settle 5 > "$L/ring_run.log" 2>&1
echo "rc=$?" >> "$L/ring_run.log"
echo "all: $(( $(date +%s) - t0 )) s" >> "$L/times.txt"
tail -n 3 "$L"/*.log
cat "$L/times.txt"
tar -cJf "$OUT/logs_ring.tar.xz" -C "$OUT" logs_ring && rm -rf "$L"
