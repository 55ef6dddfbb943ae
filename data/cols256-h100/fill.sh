#!/bin/sh
# fill.sh -- writes the fill that says where rmsnorm_bwd.cols wins at few
# rows: the default backward (data/grid-h200/derive.sh: its families,
# params and where() as they are, bf16, exhaustive) at the shapes of
# shapes.txt (M = 256 at the bf16 grid's 16 hidden sizes), with `cols`
# (every config of data/cols-h200/cols.lua) beside them.  The header
# offers a `cols` entry at its own N only (header format 5,
# docs/dispatch-header.md), so a `cols` result at M = 256 serves that N's
# rows below M = 512.
#   sh data/cols256-h100/fill.sh [SHAPES] > cols256.lua   (SHAPES: "M N" lines,
#                                                    shapes.txt here by default)
#   build/normtune run cols256.lua --db cols256.db
set -u
d=$(dirname "$0")
# the cols family block of data/cols-h200/cols.lua, the one place of its space
cols=$(awk '/^    cols = \{$/ { on = 1 } on { print } on && /^    \},$/ { exit }' data/cols-h200/cols.lua)
[ -n "$cols" ] || { echo "fill.sh: no cols family in data/cols-h200/cols.lua" >&2; exit 1; }
sh data/grid-h200/derive.sh lua/sweeps/rmsnorm_bwd.lua "${1:-$d/shapes.txt}" | awk -v cols="$cols" '
{ print }
/^  families = \{$/ && !done {
    print "    -- rows statistics, then column tiles holding every row (data/cols-h200/cols.lua)"
    print cols
    done = 1
}
END { if (!done) { print "fill.sh: no families table in the derived sweep" > "/dev/stderr"; exit 1 } }'
