#!/bin/sh
# exp.sh -- cols_pre.patch against cols as shipped: colsx.lua (every cols
# config at six shapes) run by the shipped normtune and by one built with
# the patch applied, in turn, twice, each into a database of its own; then
# the patched test_kernels of cols (float64, bitwise, every dtype
# combination).  On the GPU machine with .devbuild/new.tar.xz (the shipped
# build) and .devbuild/exp.tar.xz (normtune and gpu/test_kernels built with
# the patch); the databases and logs come back in $OUT/runs.tar.xz.
set -u
mkdir -p build exp && tar -xJf .devbuild/new.tar.xz -C build && tar -xJf .devbuild/exp.tar.xz -C exp || exit 1
nvidia-smi --query-gpu=name,uuid --format=csv > $OUT/gpu.txt
sh data/colsown-h100/colsx.sh > colsx.lua || exit 1
for i in 1 2; do
  build/normtune run colsx.lua --db $OUT/old$i.db > $OUT/old$i.log 2>&1
  exp/normtune run colsx.lua --db $OUT/new$i.db > $OUT/new$i.log 2>&1
done
timeout 150 exp/gpu/test_kernels --family rmsnorm_bwd.cols > $OUT/test_kernels_new.log 2>&1; echo rc=$? >> $OUT/test_kernels_new.log
cd $OUT && tar -cJf runs.tar.xz *.db *.log && rm -f *.db old*.log new*.log; tail -3 test_kernels_new.log
