#!/bin/sh
# run.sh -- how run5 was taken (from the repository root, on the GPU
# machine): make bench (no peers) with the header of b6bbd6f, a bench built
# from the header before it (332 tuned shapes:
#   make B=build-old DISPATCH=old_dispatch.h build-old/gpu/bench
# where old_dispatch.h is kernels/normtune_dispatch.h of 6293218), both at
# the bench's shapes and at grid_shapes.txt, the new header twice.
# OLD_BENCH names that bench; OUT the output folder.
O=${OUT:-build/run5}; old=${OLD_BENCH:-build-old/gpu/bench}; g=data/bench-h200/run5/grid_shapes.txt
mkdir -p "$O"
make bench NOBUILD=1 BENCH_PEERS=0 BENCH_OUT="$O/new" > "$O/bench_new.log" 2>&1
"$old" --shapes tests/gpu/bench_shapes.txt > "$O/bench_old.txt" 2>&1
build/gpu/bench --shapes "$g" > "$O/grid_new.txt" 2>&1
"$old" --shapes "$g" > "$O/grid_old.txt" 2>&1
build/gpu/bench --shapes "$g" > "$O/grid_new2.txt" 2>&1
build/gpu/bench --shapes tests/gpu/bench_shapes.txt > "$O/bench_new2.txt" 2>&1
