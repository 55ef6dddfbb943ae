#!/bin/sh
# test_yardstick.sh -- the runner's yardstick (nt_traffic, kernels/check.cuh)
# moves the op's bytes at least as fast as the op's own kernels: no variant
# of tests/gpu/yardstick.lua (the backward) and yardstick_fwd.lua, short
# rows among them, comes out far above
# 100% op.  A kernel with the op's traffic cannot beat a plain streaming
# pass over the same tensors by more than noise; the 10% of slack is far
# wider than that, and far narrower than what a broken yardstick gives
# (372% op at 65536 x 64 with a block per row).
NAME=yardstick
. "$(dirname "$0")/../lib.sh"
NORMTUNE=${NORMTUNE:-build/normtune}
d=$(dirname "$0")
expect run_bwd 0 run "$d/yardstick.lua" --settle 0 --db "$T/y.db"
expect run_fwd 0 run "$d/yardstick_fwd.lua" --settle 0 --db "$T/y.db"
for shape in "64 65536" "64 131072" "128 1048576" "4096 4096"; do
    # shellcheck disable=SC2086 # N and M, two arguments
    "$NORMTUNE" query --db "$T/y.db" shape $shape --format csv >"$T/q" 2>"$T/err" ||
        { bad "query_$shape" "$(cat "$T/err")"; continue; }
    # the quoted fields (dtype, params) hold commas: drop them first; % op is
    # the 14th column, "ok" results only
    pct=$(sed 1d "$T/q" | sed 's/"[^"]*"/q/g' | awk -F, '$6 == "ok" { print $14 }')
    n=$(echo "$pct" | grep -c .)
    name=pct_op_$(echo "$shape" | awk '{ print $2 "x" $1 }')
    if [ "$n" -lt 1 ]; then bad "$name" "no ok result: $(cat "$T/q")"; continue; fi
    over=$(echo "$pct" | awk '$1 > 110 || $1 < 1 { print }')
    [ -z "$over" ] && ok "$name" || bad "$name" "% op out of (1, 110]: $(echo "$pct" | tr '\n' ' ')"
done
finish
