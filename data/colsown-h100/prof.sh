#!/bin/sh
# prof.sh -- Nsight Compute profiles of the backward at 256 x 8192 and
# 256 x 4096 bf16: the header's `cols` configs (its statistics kernel and
# its column tiles) and the `persistent` configs they replaced (the main
# kernel and its dw column sum), by tests/gpu/profile.sh.  On the GPU
# machine, from the repository root, with build/ carried or unpacked
# (run.sh says how): sh data/colsown-h100/prof.sh   (reports under $OUT/ncu)
set -u
P=$OUT/ncu
mkdir -p "$P"
prof() { # name kernel-regex family params M N
    n=$1 k=$2; shift 2
    NCU_KERNEL=$k NCU_COUNT=2 timeout 90 sh tests/gpu/profile.sh rmsnorm_bwd "$@" > "$P/$n.txt" 2>&1
    echo "rc=$?" >> "$P/$n.txt"
}
prof cols_256x8192 '^nt_bwd_(stats|cols)' cols block=256,cc=8,rows=8,k=0 256 8192
prof persistent_256x8192 '^nt_(persist|colsum)' persistent block=512,chunks=2,stages=2,k=1 256 8192
prof cols_256x4096 '^nt_bwd_(stats|cols)' cols block=256,cc=4,rows=4,k=2 256 4096
prof persistent_256x4096 '^nt_(persist|colsum)' persistent block=256,chunks=2,stages=2,k=1 256 4096
tar -cJf "$OUT/ncu.tar.xz" -C "$OUT" ncu && rm -rf "$P"
