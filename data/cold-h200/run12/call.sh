#!/bin/sh
# call 5: a cold make tune (empty database, cold compile cache) with the
# search of this build, then its picks against the exhaustive best of
# results.db, both measured side by side on this GPU (tests/gpu/versus.py)
mkdir -p build /tmp/v && tar -xJf BIN.tar.xz (build/normtune of 604bd22..de9b526) -C build && xz -dc REF.db.xz (data/results.db) > /tmp/v/ref.db
nvidia-smi --query-gpu=uuid,name --format=csv > $OUT/gpu.txt
for op in bwd fwd; do ./build/normtune list lua/sweeps/rmsnorm_$op.lua > /tmp/v/space_$op.txt; done
t0=$(date +%s)
( time make tune NOBUILD=1 SEED= DB=$OUT/tune.db HEADER=/tmp/v/h.h ) > $OUT/tune.log 2>&1
echo "make tune rc $? in $(( $(date +%s) - t0 )) s" >> $OUT/tune.log
for op in bwd fwd; do
  python3 tests/gpu/versus.py make-script --tuned $OUT/tune.db --ref /tmp/v/ref.db --op rmsnorm_$op --space /tmp/v/space_$op.txt -o /tmp/v/vs_$op.lua > $OUT/vs_make_$op.log 2>&1
  ./build/normtune run /tmp/v/vs_$op.lua --db /tmp/v/vs_$op.db --settle 5 > $OUT/vs_run_$op.log 2>&1
  python3 tests/gpu/versus.py compare --tuned $OUT/tune.db --ref /tmp/v/ref.db --vs /tmp/v/vs_$op.db --space /tmp/v/space_$op.txt > $OUT/versus_$op.txt 2>&1
  tail -n 1 $OUT/versus_$op.txt
done
xz $OUT/tune.db
