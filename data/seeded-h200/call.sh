#!/bin/sh
# call.sh -- issue "Search that learns", its last point: the default
# `make tune` (warm, seeded from the shipped data/results.db: SEED) on an
# H200, then its picks against the exhaustive best of results.db, both
# measured side by side on this GPU (tests/gpu/versus.py with --newest:
# the picks of this GPU's search, and the pooled picks of the model).
# Refuses any GPU but an H200.  About 6-8 minutes; logs under $OUT.
#   here:  make build/normtune && mkdir -p .devbuild &&
#          tar -cJf .devbuild/bin.tar.xz -C build normtune ... &&
#          xz -T8 -6 -c data/results.db > .devbuild/ref.db.xz
#          (results.db out of the travelling tree: 64 MiB)
#   there: sh data/seeded-h200/call.sh .devbuild/bin.tar.xz .devbuild/ref.db.xz
set -u
nvidia-smi --query-gpu=name,uuid,clocks.max.memory --format=csv > "$OUT/gpu.txt" 2>&1
case "$(cat "$OUT/gpu.txt")" in
*H200*) ;;
*) echo "call.sh: not an H200 (gpu.txt)"; exit 1 ;;
esac
V=/tmp/v
mkdir -p build $V && tar -xJf "$1" -C build && xz -dc "$2" > $V/ref.db || exit 1
for op in bwd fwd; do
    ./build/normtune list lua/sweeps/rmsnorm_$op.lua > $V/space_$op.txt &&
        ./build/normtune list lua/sweeps/rmsnorm_${op}_n8.lua >> $V/space_$op.txt || exit 1
done
t0=$(date +%s)
( time timeout 330 make tune NOBUILD=1 SEED=$V/ref.db DB=$V/tune.db HEADER=$V/h.h ) > "$OUT/tune.log" 2>&1
echo "make tune rc $? in $(( $(date +%s) - t0 )) s" >> "$OUT/tune.log"
tail -n 1 "$OUT/tune.log"
for op in bwd fwd; do
    python3 tests/gpu/versus.py make-script --newest --tuned $V/tune.db --ref $V/ref.db \
        --op rmsnorm_$op --space $V/space_$op.txt -o $V/vs_$op.lua > "$OUT/vs_make_$op.log" 2>&1
    timeout 120 ./build/normtune run $V/vs_$op.lua --db $V/vs_$op.db --settle 5 > $V/vs_run_$op.log 2>&1
    echo "rc=$?" >> $V/vs_run_$op.log
    python3 tests/gpu/versus.py compare --newest --tuned $V/tune.db --ref $V/ref.db \
        --vs $V/vs_$op.db --space $V/space_$op.txt > "$OUT/versus_$op.txt" 2>&1
    tail -n 2 "$OUT/versus_$op.txt"
done
echo "all: $(( $(date +%s) - t0 )) s" >> "$OUT/tune.log"
tar -cJf "$OUT/vs.tar.xz" -C $V vs_run_bwd.log vs_run_fwd.log vs_bwd.db vs_fwd.db h.h 2>/dev/null
xz -T4 -6 -c $V/tune.db > "$OUT/tune.db.xz"
