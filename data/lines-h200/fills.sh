#!/bin/sh
# fills.sh DIR -- write into DIR the four scripts whose runs fill.db holds:
# every variant of the default sweeps' families (fill_bwd.lua,
# fill_fwd.lua: data/grid-h200/derive.sh) and of the _n8 sweeps'
# (fill_bwd_n8.lua, fill_fwd_n8.lua: their shapes replaced), bf16, at the
# shapes of fill_shapes.txt.  The sweeps are those of lua/sweeps/ as of
# 2026-12-04 (unchanged by this folder's commits).  Run from the
# repository's root:
#
#   sh data/lines-h200/fills.sh /tmp/f && for s in bwd bwd_n8 fwd fwd_n8; do
#       normtune run /tmp/f/fill_$s.lua --db fill.db; done
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
    echo "usage: sh data/lines-h200/fills.sh DIR (an existing folder)" >&2
    exit 2
fi
here=$(dirname "$0")
shapes="$here/fill_shapes.txt"
for op in bwd fwd; do
    sh data/grid-h200/derive.sh "lua/sweeps/rmsnorm_$op.lua" "$shapes" > "$1/fill_$op.lua" || exit 1
    # the _n8 script with its Ns loop replaced by the list of shapes
    awk -v shapes="$shapes" '
        BEGIN {
            print "local shapes = {"
            while ((getline l < shapes) > 0) { split(l, f, " "); print "  {M = " f[1] ", N = " f[2] "}," }
            print "}"
        }
        /^local Ns = / { skip = 1; next }
        skip && /^end$/ { skip = 0; next }
        skip { next }
        /^local shapes = \{\}$/ { next }
        { print }' "lua/sweeps/rmsnorm_${op}_n8.lua" > "$1/fill_${op}_n8.lua" || exit 1
done
