#!/bin/sh
# prof.sh -- Nsight Compute profiles of the shipped header's configs at the
# mid shapes of "Kernels at every shape" whose goals are not met and which
# ../ncu-h200/ does not cover: the backward at 16384 x 8192, 8192 x 16384,
# 4096 x 7168, 4096 x 12288, 8192 x 3584, 2048 x 8192 and 32768 x 1536
# (each with its dw column sum), the forward at 16384 x 8192, 8192 x 16384,
# 4096 x 4096, 4096 x 7168, 4096 x 12288, 2048 x 8192, 256 x 8192 and
# 262144 x 128 (docs/guide.md, make bench: the goals and run9's figures).
# The configs are the ones the library runs there: build/gpu/bench
# --shapes prints them (family and params after each op's time), so the
# profiles are of what make bench timed, by tests/gpu/profile.sh.  Any GPU
# (gpu.txt names it; the header's configs are the H200's).  Writes
# $OUT/ncumid.tar.xz: bench.txt, gpu.txt, configs.txt, ncu_<op>_<M>x<N>.txt
# (tarred again after each profile, so a call cut short keeps what ran).
#   there: sh data/ncumid-h200/prof.sh .devbuild/bin.tar.xz
set -u
[ -x build/normtune ] || { mkdir -p build && tar -xJf "$1" -C build; } || exit 1
L=$OUT/ncumid
mkdir -p "$L"
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,clocks.max.memory --format=csv,noheader > "$L/gpu.txt"
printf '%s\n' "16384 8192" "8192 16384" "4096 7168" "4096 12288" "8192 3584" "2048 8192" \
    "32768 1536" "4096 4096" "256 8192" "262144 128" > "$L/shapes.txt"
timeout 120 build/gpu/bench --shapes "$L/shapes.txt" > "$L/bench.txt" 2>&1 || { tail "$L/bench.txt"; exit 1; }
# "op M N family params" for each (shape, op) below its goal
awk '/^--- [0-9]+ x [0-9]+ / { M = $2; N = $4; next }
     $1 == "rmsnorm_bwd" && $2 == "dx+dw" { for (i = 3; i < NF; i++) if ($i ~ /^rmsnorm_bwd\./) b[M " " N] = $i " " $(i + 1) }
     $1 == "rmsnorm_fwd" && $2 == "y"     { for (i = 3; i < NF; i++) if ($i ~ /^rmsnorm_fwd\./) f[M " " N] = $i " " $(i + 1) }
     END { nb = split("16384 8192,8192 16384,4096 7168,4096 12288,8192 3584,2048 8192,32768 1536", B, ",")
           nf = split("16384 8192,8192 16384,4096 4096,4096 7168,4096 12288,2048 8192,256 8192,262144 128", F, ",")
           for (i = 1; i <= nb; i++) if (B[i] in b) print "rmsnorm_bwd", B[i], b[B[i]]
           for (i = 1; i <= nf; i++) if (F[i] in f) print "rmsnorm_fwd", F[i], f[F[i]] }' \
    "$L/bench.txt" > "$L/configs.txt"
cat "$L/configs.txt"
here=$(pwd)/
while read -r op M N fam params; do
    # the backward's chain: its kernel and the dw column sum after it
    case "$op" in rmsnorm_bwd) cnt=2 kern='^nt_(bwd_|persist|colsum)' ;; *) cnt=1 kern='^nt_fwd_' ;; esac
    NCU_COUNT=$cnt NCU_KERNEL=$kern timeout 120 \
        sh tests/gpu/profile.sh "$op" "${fam#*.}" "$params" "$M" "$N" > "$L/ncu.tmp" 2>&1
    echo "$op $M x $N $fam $params: rc=$?"
    sed "s#$here##g" "$L/ncu.tmp" > "$L/ncu_${op}_${M}x${N}.txt" && rm -f "$L/ncu.tmp"   # paths in the project
    tar -cJf "$OUT/ncumid.tar.xz" -C "$OUT" ncumid   # after each: a call cut short keeps what ran
done < "$L/configs.txt"
tar -cJf "$OUT/ncumid.tar.xz" -C "$OUT" ncumid && rm -rf "$L"
