#!/bin/sh
# call.sh -- a cold `make tune` on a GPU model data/results.db does not
# hold (an H100: what an engineer bringing up new hardware runs): the
# default sweeps into an empty database (SEED=), the header exported from
# it and the report, with make's log and the wall time; $OUT/tune.tar.xz.
# The binaries come from BIN.tar.xz (the device has no Lua headers).
#   there: sh data/tune-h100/call.sh .devbuild/bin.tar.xz
set -u
[ $# -eq 1 ] && [ -r "$1" ] || { echo "usage: sh data/tune-h100/call.sh BIN.tar.xz" >&2; exit 2; }
[ -x build/normtune ] || { mkdir -p build && tar -xJf "$1" -C build; } || exit 1
L=$OUT/tune
mkdir -p "$L"
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,clocks.max.memory --format=csv,noheader > "$L/gpu.txt"
t0=$(date +%s)
timeout "${TUNE_LIMIT:-480}" make tune NOBUILD=1 SEED= DB="$L/tune.db" HEADER="$L/normtune_dispatch.h" \
    > "$L/tune.log" 2>&1
echo "rc=$? wall=$(( $(date +%s) - t0 )) s" >> "$L/tune.log"
tail -n 4 "$L/tune.log"
[ -f "$L/tune.db" ] && xz -9 "$L/tune.db"
tar -cJf "$OUT/tune.tar.xz" -C "$OUT" tune && rm -rf "$L"
