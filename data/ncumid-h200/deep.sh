#!/bin/sh
# deep.sh -- deep.lua's run (every config of persistent and held that
# covers the row exactly, stages 1 to 4, k 1 and 2, at 16384 x 8192 and
# 8192 x 16384, one GPU) and its report, then Nsight Compute profiles of
# persistent with 512 threads of 2 chunks at 16384 x 8192 as the H200's
# best (2 stages, k 1) and with a third stage or a second block an SM,
# which the H200's stored results have 7.6-8.4% slower: what the extra
# rows in flight or warps change.  Any GPU (gpu.txt names it).  Writes
# $OUT/deep.tar.xz.
#   there: sh data/ncumid-h200/deep.sh .devbuild/bin.tar.xz
set -u
[ -x build/normtune ] || { mkdir -p build && tar -xJf "$1" -C build; } || exit 1
L=$OUT/deep
mkdir -p "$L"
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,clocks.max.memory --format=csv,noheader > "$L/gpu.txt"
timeout 240 build/normtune run data/ncumid-h200/deep.lua --db "$L/deep.db" --settle 5 > "$L/deep_run.log" 2>&1
echo "rc=$?" >> "$L/deep_run.log"
build/normtune report --db "$L/deep.db" > "$L/deep_report.txt" 2>&1
for sh in "8192 16384" "16384 8192"; do build/normtune query --db "$L/deep.db" shape $sh; done > "$L/deep_shapes.txt" 2>&1
xz -9 "$L/deep.db"
here=$(pwd)/
for params in block=512,chunks=2,stages=2,k=1 block=512,chunks=2,stages=3,k=1 block=512,chunks=2,stages=2,k=2; do
    NCU_COUNT=2 NCU_KERNEL='^nt_(persist|colsum)' timeout 120 \
        sh tests/gpu/profile.sh rmsnorm_bwd persistent "$params" 16384 8192 > "$L/ncu.tmp" 2>&1
    echo "$params: rc=$?"
    sed "s#$here##g" "$L/ncu.tmp" > "$L/ncu_16384x8192_$(echo "$params" | tr -d 'a-z=' | tr , _).txt"
    rm -f "$L/ncu.tmp"
done
tail -n 2 "$L/deep_run.log"
tar -cJf "$OUT/deep.tar.xz" -C "$OUT" deep && rm -rf "$L"
