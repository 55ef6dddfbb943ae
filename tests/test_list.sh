#!/bin/sh
# test_list.sh -- `normtune list`: the default sweep (its total equals the
# sum of its counts and the number of variant lines), --count, usage errors
# (exit 2), bad scripts (exit 1, "file:line: message" on stderr), --help.
#
# Needs NORMTUNE (the binary) and NT_TMP (a scratch dir); prints PASS/FAIL
# lines and "RESULT passed failed".
NAME=test_list
. "$(dirname "$0")/lib.sh"


sweep=$root/lua/sweeps/rmsnorm_bwd.lua

# --help, usage errors
expect help 0 list --help
grep -q "usage: normtune list" "$T/out" && ok help_text || bad help_text
expect no_args 2 list
grep -q "needs a SCRIPT" "$T/err" && ok no_args_message || bad no_args_message "$(cat "$T/err")"
expect unknown_option 2 list --frobnicate "$sweep"
grep -q "unknown option '--frobnicate'" "$T/err" && ok unknown_option_message || bad unknown_option_message "$(cat "$T/err")"
[ "$(wc -l <"$T/err")" = 1 ] && ok usage_one_line || bad usage_one_line "$(cat "$T/err")"
expect extra_args 2 list "$sweep" "$sweep"
expect missing_script 1 list "$T/nope.lua"

# the default sweep: counts add up; variant lines match the total
expect default_count 0 list --count "$sweep"
cp "$T/out" "$T/counts"
total=$(awk '$1 == "total" {print $NF}' "$T/counts")
rows=$(awk '/^M=/ {s += $NF} END {print s + 0}' "$T/counts")
cols=$(awk '/^M=/ {for (i = 3; i < NF; i++) s += $i} END {print s + 0}' "$T/counts")
nshape=$(grep -c '^M=' "$T/counts")
if [ -n "$total" ] && [ "$total" -gt 0 ] && [ "$total" = "$rows" ] && [ "$total" = "$cols" ]; then
    ok default_total_is_sum
else
    bad default_total_is_sum "total '$total', rows $rows, cells $cols"
fi
[ "$nshape" = 40 ] && ok default_40_shapes || bad default_40_shapes "$nshape shapes"
[ "${total:-0}" -ge 1500 ] && [ "${total:-0}" -le 4000 ] && ok default_size || bad default_size "total $total"
expect default_list 0 list "$sweep"
lines=$(grep -c '^M=[0-9]* N=[0-9]* rmsnorm_bwd\.' "$T/out")
[ "$lines" = "$total" ] && ok default_lines_match_total || bad default_lines_match_total "$lines lines, total $total"
grep -q '^M=4096 N=1024 rmsnorm_bwd.persistent block=128,chunks=1,stages=2,k=0$' "$T/out" &&
    ok default_has_example || bad default_has_example
# every persistent line covers its row with at most one partly filled chunk
awk '$3 == "rmsnorm_bwd.persistent" {
        n = substr($2, 3); split($4, kv, /[=,]/); b = kv[2]; c = kv[4];
        if (b * c * 8 < n || b * c * 8 - n >= b * 8) bad++ }
     END {exit bad > 0}' "$T/out" && ok default_where_holds || bad default_where_holds
[ "$(sort "$T/out" | uniq -d | grep -c '^M=')" = 0 ] && ok default_no_duplicates || bad default_no_duplicates

# the smoke sweep loads too
expect smoke 0 list --count "$root/lua/sweeps/smoke.lua"

# a small script with hand-counted variants: naive 2 x 2 = 4 per shape;
# persistent block {64, 128} x chunks {1, 2} with block*chunks*8 == N:
# N=1024 -> (64,2), (128,1) = 2; N=512 -> (64,1) = 1.  Total 4+2+4+1 = 11.
cat >"$T/small.lua" <<'EOF2'
return normtune.sweep {
  op = "rmsnorm_bwd",
  shapes = {{M = 8, N = 1024}, {M = 8, N = 512}},
  families = {
    naive = {params = {nsplit = {1, 2}, partial = {"bf16", "f32"}}},
    persistent = {
      params = {block = {64, 128}, chunks = {1, 2}, stages = {1}, k = {0}},
      where = function(p, s) return p.block * p.chunks * 8 == s.N end,
    },
  },
}
EOF2
expect small 0 list "$T/small.lua"
[ "$(awk '$1 == "total" {print $NF}' "$T/out")" = 11 ] && ok small_total || bad small_total "$(tail -1 "$T/out")"
[ "$(grep -c '^M=8 N=512 rmsnorm_bwd.persistent' "$T/out")" = 1 ] && ok small_persistent || bad small_persistent

# random strategy: at most budget variants per shape and family
sed 's/^  },$/  }, search = {strategy = "random", budget = 3, seed = 1},/' "$T/small.lua" >"$T/random.lua"
expect random 0 list "$T/random.lua"
grep -q "strategy random" "$T/out" && ok random_strategy_shown || bad random_strategy_shown
n=$(grep -c '^M=8 N=1024 rmsnorm_bwd.naive' "$T/out")
[ "$n" = 3 ] && ok random_budget || bad random_budget "$n naive lines for N=1024, want 3"

# bad scripts: exit 1, one line "file:line: message" on stderr
printf 'local a = 1\nlocal b = = 2\n' >"$T/syntax.lua"
expect syntax 1 list "$T/syntax.lua"
grep -q 'syntax.lua:2: ' "$T/err" && ok syntax_position || bad syntax_position "$(cat "$T/err")"
sed 's/block = {64, 128}/blok = {64, 128}/' "$T/small.lua" >"$T/misspelt.lua"
expect misspelt 1 list "$T/misspelt.lua"
grep -q "misspelt.lua:7: .*unknown parameter 'blok' (allowed: block, chunks, stages, k)" "$T/err" &&
    ok misspelt_message || bad misspelt_message "$(cat "$T/err")"
[ "$(wc -l <"$T/err")" = 1 ] && ok error_one_line || bad error_one_line "$(cat "$T/err")"
[ ! -s "$T/out" ] && ok error_no_stdout || bad error_no_stdout
sed 's/p.block \* p.chunks \* 8 == s.N/s.N > 600 and p.block * p.chunks * 8 == s.N/; s/nsplit = {1, 2}/nsplit = {1}/' "$T/small.lua" |
    sed 's/naive = {params = {nsplit = {1}, partial = {"bf16", "f32"}}},/naive = {params = {nsplit = {1}, partial = {"f32"}}, where = function(p, s) return s.N > 600 end},/' >"$T/emptied.lua"
expect emptied 1 list "$T/emptied.lua"
grep -q 'emptied.lua: shape M=8 N=512: no variant left after where constraints' "$T/err" &&
    ok emptied_message || bad emptied_message "$(cat "$T/err")"
printf 'os.execute("touch %s/pwned")\n' "$T" >"$T/os.lua"
expect sandbox 1 list "$T/os.lua"
[ ! -e "$T/pwned" ] && ok sandbox_no_effect || bad sandbox_no_effect

rm -rf "$T"
echo "RESULT $passed $failed"
[ "$failed" = 0 ]
