#!/bin/sh
# call.sh -- the device call tma.lua waits for: rmsnorm_bwd.tma's GPU tests
# (float64 and bitwise at every dtype combination; compute-sanitizer
# memcheck, racecheck and synccheck), then tma.lua's run beside held and
# persistent, logs under $OUT (about 4 minutes on an H200).
#   here:  make build/normtune build/gpu/test_kernels &&
#          mkdir -p .devbuild && tar -cJf .devbuild/bin.tar.xz -C build normtune gpu/test_kernels
#   there: sh data/bwdtma-h200/call.sh .devbuild/bin.tar.xz
# then `normtune report --db $OUT/tma.db`: the best family per shape and
# the runner-up with its time over the best.
set -u
mkdir -p build && tar -xJf "$1" -C build || exit 1
nvidia-smi --query-gpu=name,uuid,clocks.max.memory --format=csv > "$OUT/gpu.txt" 2>&1
L=$OUT/logs
mkdir -p "$L"
t0=$(date +%s)
( timeout 150 build/gpu/test_kernels --family rmsnorm_bwd.tma > "$L/test_kernels_tma.log" 2>&1
  echo "rc=$?" >> "$L/test_kernels_tma.log" ) &
for tool in memcheck racecheck synccheck; do
    SANITIZE_TIMEOUT=150 sh tests/gpu/sanitize.sh --one build/gpu/test_kernels "$L" $tool rmsnorm_bwd.tma &
done
wait
echo "tests: $(( $(date +%s) - t0 )) s" > "$L/times.txt"
timeout 300 build/normtune run data/bwdtma-h200/tma.lua --db "$OUT/tma.db" --settle 5 > "$L/tma_run.log" 2>&1
echo "rc=$?" >> "$L/tma_run.log"
echo "all: $(( $(date +%s) - t0 )) s" >> "$L/times.txt"
tail -n 3 "$L"/*.log
cat "$L"/*.rc "$L/times.txt"
build/normtune report --db "$OUT/tma.db" > "$L/report.txt" 2>&1
tar -cJf "$OUT/logs.tar.xz" -C "$OUT" logs && rm -rf "$L"
