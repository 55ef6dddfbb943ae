#!/bin/sh
# call.sh -- the device call of pstage.lua and ppersist.lua: each script's
# exhaustive run beside stage and persistent, into $OUT/pstage.db and
# $OUT/ppersist.db (run.log), then the GPU tests of rmsnorm_fwd.pstage and
# rmsnorm_bwd.ppersist (float64 and bitwise at every dtype combination;
# compute-sanitizer memcheck and racecheck; tests.log).  The runs first:
# each step has its own limit, and what a call cut short has written under
# $OUT still comes back (five files).  About 7 minutes.
#   here:  make build/normtune build/gpu/test_kernels &&
#          tar -cJf .devbuild/pst.tar.xz -C build normtune gpu/test_kernels
#   there: sh data/pstage-h200/call.sh .devbuild/pst.tar.xz
# then data/pstage-h200/best.sh on the two databases.
set -u
mkdir -p build && tar -xJf "$1" -C build || exit 1
nvidia-smi --query-gpu=name,uuid,clocks.max.memory --format=csv > "$OUT/gpu.txt" 2>&1
t0=$(date +%s)
for s in pstage:150 ppersist:120; do
    name=${s%:*} lim=${s#*:}
    echo "== $name" >> "$OUT/run.log"
    timeout "$lim" build/normtune run data/pstage-h200/$name.lua --db "$OUT/$name.db" --settle 5 \
        >> "$OUT/run.log" 2>&1
    echo "rc=$? at $(( $(date +%s) - t0 )) s" >> "$OUT/run.log"
done
F=rmsnorm_fwd.pstage,rmsnorm_bwd.ppersist
{ timeout 150 build/gpu/test_kernels --family $F 2>&1; echo "test_kernels rc=$?"; } > "$OUT/tk.tmp" &
SANITIZE_FAMILIES="rmsnorm_fwd.pstage rmsnorm_bwd.ppersist" SANITIZE_TIMEOUT=150 \
    sh tests/gpu/sanitize.sh build/gpu/test_kernels > "$OUT/tests.log" 2>&1
echo "sanitize rc=$?" >> "$OUT/tests.log"
wait
cat "$OUT/tk.tmp" >> "$OUT/tests.log" && rm -f "$OUT/tk.tmp"
echo "all: $(( $(date +%s) - t0 )) s" >> "$OUT/run.log"
grep -E "^rc=|^all|measured" "$OUT/run.log"
grep -E "PASS|FAIL|RESULT|rc=" "$OUT/tests.log" | tail -12
