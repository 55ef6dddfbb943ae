#!/bin/sh
# colsx.sh -- writes colsx.lua: every config of rmsnorm_bwd.cols (data/cols-h200/cols.lua,
# its other families left out) at six shapes of few rows, for exp.sh and exp_alone.sh
# (the Lua sandbox has no dofile, so a script cannot extend another).
#   sh data/colsown-h100/colsx.sh > colsx.lua
awk '
/^  shapes = / { print "  shapes = {{M = 256, N = 2048}, {M = 256, N = 4096}, {M = 256, N = 8192}, {M = 256, N = 16384},"
                 print "            {M = 512, N = 8192}, {M = 1024, N = 4096}},"; skip = 1; next }
skip && /^  families = \{$/ { skip = 0 }
skip { next }
/^    (warp|persistent) = \{$/ { drop = 1; next }
drop { if ($0 ~ /^    \},$/) drop = 0; next }
{ print }' data/cols-h200/cols.lua
