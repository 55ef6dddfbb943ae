#!/bin/sh
# test_device.sh -- `run --device` picks a GPU by name or UUID (prefix), as
# the reading commands do; `--gpu N` by ordinal; a selector that matches no
# GPU fails before anything is written and lists the GPUs present.
NAME=device
. "$(dirname "$0")/../lib.sh"
NORMTUNE=${NORMTUNE:-build/normtune}
script=$(dirname "$0")/one.lua
gpuname=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0)
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0)
expect by_name 0 run "$script" --settle 0 --db "$T/a.db" --device "$gpuname"
expect by_uuid_prefix 0 run "$script" --settle 0 --db "$T/b.db" --device "$(echo "$uuid" | cut -c1-12)"
has by_uuid_recorded "$T/err" "$gpuname"
"$NORMTUNE" query --db "$T/b.db" sweeps --device "$uuid" >"$T/q" 2>&1 && ok reader_same_uuid ||
    bad reader_same_uuid "$(cat "$T/q")"
expect by_gpu 0 run "$script" --settle 0 --db "$T/c.db" --gpu 0
expect no_match 1 run "$script" --settle 0 --db "$T/d.db" --device "NVIDIA Z999"
has no_match_lists "$T/err" "present: 0 $gpuname"
[ ! -e "$T/d.db" ] && ok no_match_no_db || bad no_match_no_db
expect gpu_out_of_range 1 run "$script" --settle 0 --db "$T/e.db" --gpu 99
finish
