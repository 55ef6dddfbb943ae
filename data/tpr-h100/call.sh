#!/bin/sh
# call.sh -- fwd_tpr.lua and bwd_tpr.lua on one GPU (any model; gpu.txt
# names it), each into its own database, with its log and normtune report;
# $OUT/tpr.tar.xz.  Here, after: sh data/tpr-h100/best.sh tpr/fwd.db.xz
#   there: sh data/tpr-h100/call.sh .devbuild/bin.tar.xz
set -u
[ $# -eq 1 ] && [ -r "$1" ] || { echo "usage: sh data/tpr-h100/call.sh BIN.tar.xz" >&2; exit 2; }
[ -x build/normtune ] || { mkdir -p build && tar -xJf "$1" -C build; } || exit 1
L=$OUT/tpr
mkdir -p "$L"
nvidia-smi --query-gpu=name,uuid --format=csv,noheader > "$L/gpu.txt"
for op in fwd bwd; do
    timeout 240 build/normtune run "data/tpr-h100/${op}_tpr.lua" --db "$L/$op.db" --settle 5 \
        > "$L/${op}_run.log" 2>&1
    echo "rc=$?" >> "$L/${op}_run.log"
    build/normtune report --db "$L/$op.db" > "$L/${op}_report.txt" 2>&1
    tail -n 3 "$L/${op}_run.log"
    xz -9 "$L/$op.db"
done
tar -cJf "$OUT/tpr.tar.xz" -C "$OUT" tpr && rm -rf "$L"
