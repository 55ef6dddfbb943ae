#!/bin/sh
# exp_alone.sh -- cols_pre.patch against cols as shipped, each run alone
# after an L2 flush (`--remeasure alone`: make bench's method, for the
# closest results of each shape): old, patched, old, patched.  On the GPU
# machine with .devbuild/new.tar.xz (the shipped build) and
# .devbuild/exp.tar.xz (normtune and gpu/test_kernels built with the patch
# applied); the databases and logs come back in $OUT/alone.tar.xz.
set -u
mkdir -p build exp && tar -xJf .devbuild/new.tar.xz -C build && tar -xJf .devbuild/exp.tar.xz -C exp || exit 1
nvidia-smi --query-gpu=name,uuid --format=csv > "$OUT/gpu_alone.txt"
sh data/colsown-h100/colsx.sh > colsx.lua || exit 1
for i in 1 2; do
    build/normtune run colsx.lua --remeasure alone --db "$OUT/aold$i.db" > "$OUT/aold$i.log" 2>&1
    exp/normtune run colsx.lua --remeasure alone --db "$OUT/anew$i.db" > "$OUT/anew$i.log" 2>&1
done
cd "$OUT" && tar -cJf alone.tar.xz a*.db a*.log && rm -f a*.db a*.log
