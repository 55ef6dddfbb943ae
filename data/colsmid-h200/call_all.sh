#!/bin/sh
# call_all.sh -- every H200 run still waiting, in one device call: call.sh
# beside it (the bench at M = 256 by the grid's 16 N, make bench without
# the peers, the fill at M = 512; $OUT/colsmid.tar.xz), then the fills of
# ../ring-h200/ring.lua and ../bwdtma-h200/tma.lua and wtma.lua, which
# have run only on an H100 (../tma-ring-h100/: their GPU tests passed
# there, so only the fills run here; about 15 s each at the H100's pace),
# each database xz'd with its log and `normtune report`, in
# $OUT/more.tar.xz.  On a GPU that is not an H200 it stops at once with
# call.sh's exit 3 (ANY_GPU=1 runs anyway).
#   there: sh data/colsmid-h200/call_all.sh .devbuild/bin.tar.xz
# MORE_ONLY=1: the fills alone (call.sh already run; ../pending-h200/run.sh).
set -u
if [ "${MORE_ONLY:-0}" != 1 ]; then
    sh data/colsmid-h200/call.sh "$1"
    rc=$?
    echo "call.sh: rc=$rc"
    [ -s "$OUT/colsmid.tar.xz" ] && rm -rf "$OUT/colsmid"   # tarred by call.sh (kept if it stopped first)
    [ "$rc" = 3 ] && exit 3
fi
[ -x build/normtune ] || { mkdir -p build && tar -xJf "$1" -C build; } || exit 1
M=$OUT/more
mkdir -p "$M"
nvidia-smi --query-gpu=name,uuid,clocks.max.memory --format=csv > "$M/gpu.txt"
for s in data/ring-h200/ring data/bwdtma-h200/tma data/bwdtma-h200/wtma; do
    b=$(basename "$s")
    timeout "${MORE_LIMIT:-150}" build/normtune run "$s.lua" --db "$M/$b.db" --settle 5 \
        > "$M/${b}_run.log" 2>&1
    echo "rc=$?" >> "$M/${b}_run.log"
    build/normtune report --db "$M/$b.db" > "$M/${b}_report.txt" 2>&1
    xz -9 "$M/$b.db"
    tail -n 2 "$M/${b}_run.log"
done
tar -cJf "$OUT/more.tar.xz" -C "$OUT" more && rm -rf "$M"
