#!/bin/sh
# test_derive.sh -- data/grid-h200/derive.sh, the recipe that writes a
# fill script from a default sweep: the derived script keeps the sweep's
# families, params and where() (normtune list gives, at a shape of the
# default sweep, exactly the default's bf16 points there), takes the shapes
# file's shapes and bf16 alone, searches exhaustively; bad arguments and a
# file that is no sweep are refused.  And data/grid-h200/grid_sweep.sh,
# the recipe for the replays of a default sweep with the bf16 grid.
NAME=test_derive
. "$(dirname "$0")/lib.sh"
d="$root/data/grid-h200/derive.sh"
bwd="$root/lua/sweeps/rmsnorm_bwd.lua"
printf '# a comment\n65536 768\n4096 1536\n' > "$T/shapes.txt"
if sh "$d" "$bwd" "$T/shapes.txt" > "$T/fill.lua" 2> "$T/derr"; then ok derives; else bad derives "$(cat "$T/derr")"; fi
expect lists 0 list "$T/fill.lua" --count
has two_problems "$T/out" "rmsnorm_bwd, 2 problems (1 dtype combination)"
has exhaustive "$T/out" "strategy exhaustive"
has new_shape "$T/out" "M=4096 N=1536 x=bf16,w=bf16,dw=f32"
# the default's points at 65536 x 768 bf16, and the derived script's
expect default_lists 0 list "$bwd"
grep '^M=65536  *N=768  *x=bf16,w=bf16,dw=f32 ' "$T/out" | tr -s ' ' | sort > "$T/want"
expect fill_lists 0 list "$T/fill.lua"
grep '^M=65536  *N=768  *x=bf16,w=bf16,dw=f32 ' "$T/out" | tr -s ' ' | sort > "$T/got"
if [ -s "$T/want" ] && cmp -s "$T/want" "$T/got"; then ok same_points_as_default
else bad same_points_as_default "$(wc -l < "$T/want") points in the default, $(wc -l < "$T/got") derived"; fi
sh "$d" "$bwd" > /dev/null 2> "$T/err"; rc=$?
[ "$rc" = 2 ] && ok usage_exit_2 || bad usage_exit_2 "exit $rc"
has usage_message "$T/err" "usage: sh derive.sh SWEEP.lua SHAPES.txt"
printf '1024\n' > "$T/bad.txt"
sh "$d" "$bwd" "$T/bad.txt" > /dev/null 2> "$T/err"; rc=$?
[ "$rc" = 2 ] && ok bad_shape_exit_2 || bad bad_shape_exit_2 "exit $rc"
has bad_shape_message "$T/err" "not \"M N\": 1024"
sh "$d" "$root/README.md" "$T/shapes.txt" > /dev/null 2> "$T/err"; rc=$?
[ "$rc" = 1 ] && ok not_a_sweep_exit_1 || bad not_a_sweep_exit_1 "exit $rc"
has not_a_sweep_message "$T/err" "no dtypes, shapes or search field"

# data/grid-h200/grid_sweep.sh: the default backward with the bf16 grid
# (16 N by 8 M) in place of its 10 by 4, the other lists as they are: 206
# problems, the sweep's own points at a core shape; with LATER, the 88
# shapes beyond the core have that budget of their own (list's column)
g="$root/data/grid-h200/grid_sweep.sh"
if sh "$g" "$bwd" > "$T/grid.lua" 2> "$T/gerr"; then ok grid_writes; else bad grid_writes "$(cat "$T/gerr")"; fi
expect grid_lists 0 list "$T/grid.lua" --count
has grid_problems "$T/out" "rmsnorm_bwd, 206 problems (5 dtype combinations)"
has grid_new_shape "$T/out" "M=131072 N=14336 x=bf16,w=bf16,dw=f32"
expect grid_points 0 list "$T/grid.lua"
grep '^M=65536  *N=768  *x=bf16,w=bf16,dw=f32 ' "$T/out" | tr -s ' ' | sort > "$T/ggot"
if [ -s "$T/want" ] && cmp -s "$T/want" "$T/ggot"; then ok grid_same_points_as_default
else bad grid_same_points_as_default "$(wc -l < "$T/want") points in the default, $(wc -l < "$T/ggot") in the grid's"; fi
sh "$g" "$bwd" 9 > "$T/grid9.lua" 2> "$T/gerr" && ok grid_later_writes || bad grid_later_writes "$(cat "$T/gerr")"
expect grid_later_lists 0 list "$T/grid9.lua" --count
n9=$(awk '$1 ~ /^M=/ && $NF == 9' "$T/out" | wc -l)
nd=$(awk '$1 ~ /^M=/ && $NF == "-"' "$T/out" | wc -l)
[ "$n9" = 88 ] && [ "$nd" = 118 ] && ok grid_later_budgets || bad grid_later_budgets "$n9 with 9, $nd without"
sh "$g" "$bwd" 0 > /dev/null 2> "$T/err"; rc=$?
[ "$rc" = 2 ] && ok grid_bad_later_exit_2 || bad grid_bad_later_exit_2 "exit $rc"
has grid_bad_later_message "$T/err" "LATER must be a positive integer, got '0'"
sh "$g" "$root/README.md" > "$T/none.lua" 2> "$T/err"; rc=$?
[ "$rc" = 1 ] && [ ! -s "$T/none.lua" ] && ok grid_not_a_sweep_exit_1 || bad grid_not_a_sweep_exit_1 "exit $rc"
finish
