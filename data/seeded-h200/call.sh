#!/bin/sh
# call.sh -- issue "Search that learns", its last point: a real `make tune`
# with `warm` on an H200 that searches from the model's stored results,
# then its picks against the exhaustive best of results.db, both measured
# side by side on this GPU (tests/gpu/versus.py with --newest: the picks
# of this GPU's search, and the pooled picks of the model).
#
# The default `make tune` (SEED=data/results.db) cannot be that run on an
# H200: the shipped file holds every point of the four default scripts
# under the current kernel sources, so the seeded run reuses all of them
# and measures nothing (README.md).  The seed here is results.db with
# every variant's source hash changed (each hex digit one up), as
# after a change to every kernel: nothing is reused, every stored result
# is a hint of older sources (tuner/sweep.c, OTHER_SRC_W) at every shape,
# and the search measures BUDGET_STORED variants a shape.
# Refuses any GPU but an H200.  About 5-7 minutes; logs under $OUT.
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
python3 - $V/ref.db $V/seed.db <<'PY' || exit 1
import sqlite3, sys
src = sqlite3.connect(sys.argv[1])
dst = sqlite3.connect(sys.argv[2])
src.backup(dst)
# each hex digit d -> d + 1 (mod 16): one-to-one, so no two variants meet
rows = dst.execute("SELECT id, src_hash FROM variant").fetchall()
dst.execute("UPDATE variant SET src_hash = 'x' || src_hash")
shift = str.maketrans("0123456789abcdef", "123456789abcdef0")
dst.executemany("UPDATE variant SET src_hash = ? WHERE id = ?",
                [(h.lower().translate(shift), i) for i, h in rows])
dst.commit()
PY
for op in bwd fwd; do
    ./build/normtune list lua/sweeps/rmsnorm_$op.lua > $V/space_$op.txt &&
        ./build/normtune list lua/sweeps/rmsnorm_${op}_n8.lua >> $V/space_$op.txt || exit 1
done
t0=$(date +%s)
( time timeout 330 make tune NOBUILD=1 SEED=$V/seed.db DB=$V/tune.db HEADER=$V/h.h ) > "$OUT/tune.log" 2>&1
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
