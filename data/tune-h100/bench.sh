#!/bin/sh
# bench.sh -- build/gpu/bench at make bench's 26 shapes with the library of
# the shipped (H200) header and with that of this folder's H100 header,
# alternated twice (A B A B) on one GPU; $OUT/hbench.tar.xz.
#   here:  make B=build-h100 DISPATCH=data/tune-h100/normtune_dispatch.h build-h100/gpu/bench
#          tar -cJf .devbuild/h100bench.tar.xz -C build-h100 gpu/bench
#   there: sh data/tune-h100/bench.sh .devbuild/bin.tar.xz .devbuild/h100bench.tar.xz
set -u
[ $# -eq 2 ] && [ -r "$1" ] && [ -r "$2" ] || { echo "usage: sh bench.sh BIN.tar.xz H100BENCH.tar.xz" >&2; exit 2; }
[ -x build/gpu/bench ] || { mkdir -p build && tar -xJf "$1" -C build; } || exit 1
mkdir -p build-h100 && tar -xJf "$2" -C build-h100 || exit 1
L=$OUT/hbench
mkdir -p "$L"
nvidia-smi --query-gpu=name,uuid --format=csv,noheader > "$L/gpu.txt"
for pass in 1 2; do
    for lib in h200 h100; do
        b=build/gpu/bench; [ "$lib" = h100 ] && b=build-h100/gpu/bench
        timeout 120 "$b" --shapes tests/gpu/bench_shapes.txt --plot-csv "$L/${lib}_pass$pass.csv" \
            > "$L/${lib}_pass$pass.txt" 2>&1
        echo "$lib pass $pass: rc=$?"
    done
done
tar -cJf "$OUT/hbench.tar.xz" -C "$OUT" hbench && rm -rf "$L"
