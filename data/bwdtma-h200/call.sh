#!/bin/sh
# call.sh -- the device call tma.lua and wtma.lua wait for: the GPU tests of
# rmsnorm_bwd.tma and rmsnorm_bwd.wtma (float64 and bitwise at every dtype
# combination; compute-sanitizer memcheck, racecheck and synccheck), then
# tma.lua (beside held and persistent) and wtma.lua (beside wstage), logs
# under $OUT (about 7 minutes on an H200).
#   here:  make build/normtune build/gpu/test_kernels &&
#          mkdir -p .devbuild && tar -cJf .devbuild/bin.tar.xz -C build normtune gpu/test_kernels
#   there: sh data/bwdtma-h200/call.sh .devbuild/bin.tar.xz
# then `normtune report --db $OUT/tma.db` (and wtma.db): the best family per
# shape and the runner-up with its time over the best.
set -u
mkdir -p build && tar -xJf "$1" -C build || exit 1
nvidia-smi --query-gpu=name,uuid,clocks.max.memory --format=csv > "$OUT/gpu.txt" 2>&1
L=$OUT/logs_bwdtma
mkdir -p "$L"
t0=$(date +%s)
( timeout 170 build/gpu/test_kernels --family rmsnorm_bwd.tma,rmsnorm_bwd.wtma \
      > "$L/test_kernels.log" 2>&1
  echo "rc=$?" >> "$L/test_kernels.log" ) &
SANITIZE_FAMILIES="rmsnorm_bwd.tma rmsnorm_bwd.wtma" SANITIZE_TOOLS="memcheck racecheck synccheck" \
    SANITIZE_JOBS=6 SANITIZE_TIMEOUT=170 sh tests/gpu/sanitize.sh build/gpu/test_kernels \
    > "$L/sanitize.log" 2>&1
wait
echo "tests: $(( $(date +%s) - t0 )) s" > "$L/times.txt"
for s in tma wtma; do
    timeout 200 build/normtune run data/bwdtma-h200/$s.lua --db "$OUT/$s.db" --settle 5 \
        > "$L/${s}_run.log" 2>&1
    echo "rc=$?" >> "$L/${s}_run.log"
    build/normtune report --db "$OUT/$s.db" > "$L/${s}_report.txt" 2>&1
done
echo "all: $(( $(date +%s) - t0 )) s" >> "$L/times.txt"
tail -n 3 "$L"/*.log
cat "$L/times.txt"
tar -cJf "$OUT/logs_bwdtma.tar.xz" -C "$OUT" logs_bwdtma && rm -rf "$L"
