#!/bin/sh
# call.sh -- the device call of pstage.lua and ppersist.lua: the GPU tests
# of rmsnorm_fwd.pstage and rmsnorm_bwd.ppersist (float64 and bitwise at
# every dtype combination; compute-sanitizer memcheck and racecheck), then
# each script's exhaustive run beside stage and persistent, into
# $OUT/pstage.db and $OUT/ppersist.db, logs in $OUT/logs_pstage.tar.xz
# (about 6 minutes).
#   here:  make build/normtune build/gpu/test_kernels &&
#          tar -cJf .devbuild/pst.tar.xz -C build normtune gpu/test_kernels
#   there: sh data/pstage-h200/call.sh .devbuild/pst.tar.xz
# then data/pstage-h200/best.sh on the two databases.
set -u
mkdir -p build && tar -xJf "$1" -C build || exit 1
nvidia-smi --query-gpu=name,uuid,clocks.max.memory --format=csv > "$OUT/gpu.txt" 2>&1
L=$OUT/logs_pstage
mkdir -p "$L"
t0=$(date +%s)
F=rmsnorm_fwd.pstage,rmsnorm_bwd.ppersist
( timeout 200 build/gpu/test_kernels --family $F > "$L/test_kernels.log" 2>&1
  echo "rc=$?" >> "$L/test_kernels.log" ) &
SANITIZE_FAMILIES="rmsnorm_fwd.pstage rmsnorm_bwd.ppersist" SANITIZE_TIMEOUT=200 sh tests/gpu/sanitize.sh build/gpu/test_kernels \
    > "$L/sanitize.log" 2>&1
wait
echo "tests: $(( $(date +%s) - t0 )) s" > "$L/times.txt"
for s in pstage ppersist; do
    timeout 170 build/normtune run data/pstage-h200/$s.lua --db "$OUT/$s.db" --settle 5 \
        > "$L/${s}_run.log" 2>&1
    echo "rc=$?" >> "$L/${s}_run.log"
    echo "$s: $(( $(date +%s) - t0 )) s" >> "$L/times.txt"
done
tail -n 3 "$L"/*.log
cat "$L/times.txt"
tar -cJf "$OUT/logs_pstage.tar.xz" -C "$OUT" logs_pstage && rm -rf "$L"
