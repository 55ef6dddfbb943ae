#!/bin/sh
# repro.sh -- the same 47 variants of repro.lua (bf16 backward, M = 1024 by
# N = 3072 and 4096, 16384 x 1024) measured in three runs of one GPU, one
# after the other (--settle 5), then a fourth with --remeasure alone: how
# far a median moves between runs.  Logs and databases under $OUT.
#   here:  make build/normtune && mkdir -p .devbuild &&
#          tar -cJf .devbuild/bin.tar.xz -C build normtune
#   there: sh data/repro-h100/repro.sh .devbuild/bin.tar.xz
set -u
mkdir -p build && tar -xJf "$1" -C build || exit 1
nvidia-smi --query-gpu=name,uuid,clocks.max.memory --format=csv > $OUT/gpu.txt
for i in 1 2 3; do
  build/normtune run data/repro-h100/repro.lua --db $OUT/r$i.db --settle 5 > $OUT/run$i.log 2>&1
  echo "run $i rc=$?"
done
build/normtune run data/repro-h100/repro.lua --db $OUT/r4.db --settle 5 --remeasure alone > $OUT/alone.log 2>&1; echo "alone rc=$?"
tar -cJf $OUT/repro.tar.xz -C $OUT r1.db r2.db r3.db r4.db run1.log run2.log run3.log alone.log && rm -f $OUT/r?.db $OUT/run?.log $OUT/alone.log
