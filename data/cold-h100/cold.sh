#!/bin/sh
# cold.sh -- a cold `make tune` (an empty database, a cold compile cache)
# of the four default sweeps on a GPU model data/results.db has nothing
# of (an H100, 2026-12-06): its time, log, database and header.
#   here:  make build/normtune && mkdir -p .devbuild &&
#          tar -cJf .devbuild/bin.tar.xz -C build normtune
#   there: sh data/cold-h100/cold.sh .devbuild/bin.tar.xz
set -u
mkdir -p build && tar -xJf "$1" -C build || exit 1
nvidia-smi --query-gpu=name,uuid,clocks.max.memory --format=csv > $OUT/gpu.txt
t0=$(date +%s)
( time make tune NOBUILD=1 SEED= DB=$OUT/tune.db HEADER=$OUT/normtune_dispatch.h ) > $OUT/tune.log 2>&1
echo "make tune rc $? in $(( $(date +%s) - t0 )) s" >> $OUT/tune.log
tail -n 4 $OUT/tune.log
xz -T4 $OUT/tune.db
