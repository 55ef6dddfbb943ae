#!/bin/sh
# grid_sweep.sh -- a default sweep with the bf16 grid of "Kernels at every
# shape" (item 5: 16 N from 1024 to 16384 by 8 M from 256 to 131072) in
# place of its grid of Ns by Ms, for `normtune replay` (the Lua sandbox has
# no dofile, so a script cannot extend another).  The sweep's own Ns by Ms
# stay the grid's core, listed N by N with the rest; with LATER, each
# shape beyond the core has that budget of its own (shapes[i].budget), as
# the default forward has since 2026-12-04 (lua/sweeps/rmsnorm_fwd.lua).
#
#   sh data/grid-h200/grid_sweep.sh lua/sweeps/rmsnorm_bwd.lua > bwd_grid.lua
#   sh data/grid-h200/grid_sweep.sh lua/sweeps/rmsnorm_bwd.lua 9 > bwd_grid9.lua
#   normtune replay --db data/results.db bwd_grid.lua --strategy warm --stored none
#
# docs/lua-api.md gives what these replays said.  Exit 2 on bad arguments,
# 1 when SWEEP does not have the lines this replaces.
if [ $# -lt 1 ] || [ $# -gt 2 ] || [ ! -r "$1" ]; then
    echo "usage: sh grid_sweep.sh SWEEP.lua [LATER] > OUT.lua" >&2
    exit 2
fi
case "${2-x}" in
    x) later= ;;
    *[!0-9]* | "" | 0) echo "grid_sweep.sh: LATER must be a positive integer, got '$2'" >&2; exit 2 ;;
    *) later=$2 ;;
esac
awk -v later="$later" -v src="$1" '
function out(l) { buf[++n] = l }
/^local join = normtune.join$/ {
    out($0)
    out("-- the grid (written by data/grid-h200/grid_sweep.sh from " src ")")
    out("local GNs = {1024, 1536, 2048, 2560, 2880, 3072, 3584, 4096, 5120, 6144, 7168, 8192, 11008,")
    out("             12288, 14336, 16384}")
    out("local GMs = {256, 1024, 2048, 4096, 8192, 16384, 65536, 131072}")
    out("local grid = {}")
    out("do")
    out("  local incore = {}")
    out("  for _, s in ipairs(normtune.grid(Ns, Ms)) do incore[s.M .. \"x\" .. s.N] = true end")
    out("  for _, s in ipairs(normtune.grid(GNs, GMs)) do")
    if (later != "")
        out("    grid[#grid + 1] = incore[s.M .. \"x\" .. s.N] and s or {M = s.M, N = s.N, budget = " later "}")
    else
        out("    grid[#grid + 1] = s")
    out("  end")
    out("end")
    done_join = 1
    next
}
/^  shapes = join\(normtune\.grid\(Ns, Ms\), short, long\),$/ {
    out("  shapes = join(grid, short, long),")
    done_sh = 1
    next
}
{ out($0) }
END {
    if (!done_join || !done_sh) {
        print "grid_sweep.sh: " src ": no \"local join = normtune.join\" or \"shapes = join(normtune.grid(Ns, Ms), short, long),\" line" > "/dev/stderr"
        exit 1
    }
    for (i = 1; i <= n; i++) print buf[i]
}' "$1"
