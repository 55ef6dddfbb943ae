#!/bin/sh
# h200_all.sh -- the H200 call the issues wait for, in one: held's fill
# (call.sh: the default backward at N = 1024 .. 16384 with held beside
# every other family, exhaustive, on one H200), the fill of cols at
# M = 256 (data/cols256-h100/fill.sh), then `make bench` of the
# shipped header's library (peers left out: BENCH_PEERS=0), then Nsight
# Compute profiles of the shipped configs at the long rows below their
# goals (as data/largen-h100/ has them on an H100).  Refuses any GPU but
# an H200 (call.sh).  About 6-9 minutes; logs under $OUT.
#   here:  make bench-build build/normtune build/gpu/test_kernels &&
#          mkdir -p .devbuild && tar -cJf .devbuild/bin.tar.xz -C build normtune
#          gpu/test_kernels gpu/bench gpu/test_lib libnormtune.so
#          and for the patched cols (optional): git apply
#          data/colsown-h100/cols_pre.patch && make build/normtune && tar -cJf
#          .devbuild/cols.tar.xz -C build normtune && git checkout kernels/rmsnorm_bwd/cols.cuh &&
#          make build/normtune
#   there: [HELD_LIMIT=S] [COLS_TAR=.devbuild/cols.tar.xz] sh data/held-h200/h200_all.sh .devbuild/bin.tar.xz
set -u
mkdir -p build && tar -xJf "$1" -C build || exit 1
t0=$(date +%s)
HELD_LIMIT=${HELD_LIMIT:-240} sh data/held-h200/call.sh "$1" || exit 1
echo "fill: $(( $(date +%s) - t0 )) s" > $OUT/times.txt
xz -T4 -6 $OUT/mid_all.db
# cols beside the default backward at M = 256 (data/cols256-h100/: on an
# H100 it won from N = 4096 up, 6-24% from 6144); keep_cols.sh there
# makes the database to merge.  With COLS_TAR (a tar of normtune built
# with data/colsown-h100/cols_pre.patch applied, 4-10% faster on an H100)
# the fill measures the patched cols: its results wait for the patch
colsnt=build/normtune
if [ -n "${COLS_TAR:-}" ]; then
    mkdir -p colsbuild && tar -xJf "$COLS_TAR" -C colsbuild && colsnt=colsbuild/normtune
fi
sh data/cols256-h100/fill.sh > cols256.lua &&
    timeout 120 $colsnt run cols256.lua --db $OUT/cols256.db > $OUT/cols256_fill.log 2>&1
echo "rc=$?" >> $OUT/cols256_fill.log
xz -T4 -6 $OUT/cols256.db
echo "cols256: $(( $(date +%s) - t0 )) s" >> $OUT/times.txt
mkdir -p $OUT/bench
timeout 150 make bench NOBUILD=1 BENCH_PEERS=0 BENCH_OUT=$OUT/bench > $OUT/bench/bench_run.log 2>&1
echo "rc=$?" >> $OUT/bench/bench_run.log
echo "bench: $(( $(date +%s) - t0 )) s" >> $OUT/times.txt
tar -cJf $OUT/bench.tar.xz -C $OUT bench && rm -rf $OUT/bench
P=$OUT/ncu; mkdir -p $P
prof() { # name op fam params M N
    n=$1; shift
    case $1 in rmsnorm_bwd) k='^nt_(bwd_|persist|colsum)'; c=2 ;; *) k='^nt_(bwd_|fwd_|persist|naive_row)'; c=1 ;; esac
    NCU_KERNEL=$k NCU_COUNT=$c timeout 60 sh tests/gpu/profile.sh "$@" > $P/$n.txt 2>&1
    echo "rc=$?" >> $P/$n.txt
}
prof bwd_4096x20480 rmsnorm_bwd persistent block=512,chunks=5,stages=2,k=1 4096 20480
prof bwd_4096x32768 rmsnorm_bwd cstage cluster=4,block=256,chunks=4,stages=3,k=2 4096 32768
prof bwd_1024x65536 rmsnorm_bwd cstage cluster=8,block=256,chunks=4,stages=3,k=2 1024 65536
prof fwd_4096x32768 rmsnorm_fwd stage block=256,chunks=16,k=2,wg=0 4096 32768
prof fwd_1024x65536 rmsnorm_fwd stage block=512,chunks=16,k=0,wg=0 1024 65536
echo "all: $(( $(date +%s) - t0 )) s" >> $OUT/times.txt
tar -cJf $OUT/ncu.tar.xz -C $OUT ncu && rm -rf $P
cat $OUT/times.txt
