#!/bin/sh
# run.sh -- the GPU call behind header format 5 (2026-12-06): the entries
# of a family whose configs run rows of any length (own_n) offered at their
# own N only, and rmsnorm_bwd.cols's results (data/cols-h200/cols.db)
# merged into data/results.db, so that the header serves 256 x 4096 and
# 256 x 8192 with cols.  On the GPU machine, from the repository root:
#   here:  make bench-build build/gpu/test_lib build/gpu/test_kernels &&
#          tar -cJf .devbuild/new.tar.xz -C build normtune gpu/test_lib gpu/bench
#            gpu/test_kernels libnormtune.so
#          and the bench of the commit before (header format 4), built in a
#          worktree of it: tar -cJf .devbuild/old.tar.xz -C OLD/build gpu/bench
#   there: sh data/colsown-h100/run.sh   (logs under $OUT)
# What it runs: cols's GPU tests (float64 and bitwise at every dtype
# combination), the benches of both headers alternated twice at
# shapes.txt (the 14 lookups the change moves, all at M = 256, and three
# controls whose config stays), then test_lib of the new library.
set -u
D=data/colsown-h100
mkdir -p build build-old && tar -xJf .devbuild/new.tar.xz -C build &&
    tar -xJf .devbuild/old.tar.xz -C build-old || exit 1
nvidia-smi --query-gpu=name,uuid,clocks.max.memory --format=csv > "$OUT/gpu.txt" 2>&1
timeout 150 build/gpu/test_kernels --family rmsnorm_bwd.cols > "$OUT/test_kernels_cols.log" 2>&1
echo "rc=$?" >> "$OUT/test_kernels_cols.log"
for i in 1 2; do
    build/gpu/bench --shapes $D/shapes.txt --csv "$OUT/new$i.csv" > "$OUT/new$i.txt" 2>&1
    build-old/gpu/bench --shapes $D/shapes.txt --csv "$OUT/old$i.csv" > "$OUT/old$i.txt" 2>&1
done
timeout 240 build/gpu/test_lib > "$OUT/test_lib.log" 2>&1
echo "rc=$?" >> "$OUT/test_lib.log"
tail -n 3 "$OUT/test_kernels_cols.log" "$OUT/test_lib.log"
