#!/bin/sh
# call_alone.sh -- alone.lua on the device: $OUT/alone.db and its log.
#   there: sh data/pstage-h200/call_alone.sh .devbuild/pst.tar.xz
set -u
mkdir -p build && tar -xJf "$1" -C build || exit 1
nvidia-smi --query-gpu=name,uuid,clocks.max.memory --format=csv > "$OUT/gpu.txt" 2>&1
timeout 200 build/normtune run data/pstage-h200/alone.lua --db "$OUT/alone.db" --settle 5 \
    > "$OUT/alone.log" 2>&1
echo "rc=$?" >> "$OUT/alone.log"
grep -v '^\[' "$OUT/alone.log" | tail -8
