#!/bin/sh
# derive.sh -- a fill script from a default sweep: its families, params and
# where() as they are, its dtype combinations replaced by bf16 alone, its
# shapes by those of SHAPES ("M N" a line, '#' comments), and its search
# by `exhaustive` (every variant).  The Lua sandbox has no dofile, so a
# script cannot extend another; this writes the derived one instead.
#
#   sh data/grid-h200/derive.sh lua/sweeps/rmsnorm_bwd.lua data/grid-h200/shapes_bwd.txt > fill_bwd.lua
#   normtune run fill_bwd.lua --db fill_bwd.db
#
# How the fills of this folder were made (2026-12-03, from the default
# sweeps of 6293218): shapes_bwd.txt and shapes_fwd.txt are the shapes of
# the bf16 grid that data/results.db did not hold whole; same_gpu.txt the
# backward's bf16 shapes of N <= 1024; ../bench-shapes-h200/wstage.txt
# the two short bench shapes.  Exit 2 on bad arguments, 1 when SWEEP does
# not have the fields this replaces.
if [ $# -ne 2 ] || [ ! -r "$1" ] || [ ! -r "$2" ]; then
    echo "usage: sh derive.sh SWEEP.lua SHAPES.txt > OUT.lua" >&2
    exit 2
fi
awk -v shapes="$2" -v src="$1" '
BEGIN {
    n = 0
    while ((getline line < shapes) > 0) {
        sub(/#.*/, "", line)
        if (split(line, f, " ") == 2) list[n++] = "{M = " f[1] ", N = " f[2] "}"
        else if (line ~ /[^ \t]/) { print "derive.sh: " shapes ": not \"M N\": " line > "/dev/stderr"; bad = 1; exit 2 }
    }
    if (!n) { print "derive.sh: " shapes ": no shapes" > "/dev/stderr"; bad = 1; exit 2 }
    print "-- derived by data/grid-h200/derive.sh from " src " and " shapes ":"
    print "-- bf16 alone, those shapes, every variant (exhaustive)."
}
/^  dtypes = \{$/ { skip = 1; print "  dtype = \"bf16\","; done_dt = 1; next }
skip { if ($0 ~ /^  },$/) skip = 0; next }
/^  shapes = / {
    print "  shapes = {"
    for (i = 0; i < n; i++) print "    " list[i] ","
    print "  },"
    done_sh = 1
    next
}
/^  search = / { print "  search = {strategy = \"exhaustive\"},"; done_se = 1; next }
{ print }
END {
    if (bad) exit 2
    if (!done_dt || !done_sh || !done_se) {
        print "derive.sh: " src ": no dtypes, shapes or search field at the sweep table'"'"'s top level" > "/dev/stderr"
        exit 1
    }
}' "$1"
