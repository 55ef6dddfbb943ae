#!/bin/sh
# test_list.sh -- `normtune list`: the default sweep (its total equals the
# sum of its counts and the number of variant lines), --count, usage errors
# (exit 2), bad scripts (exit 1, "file:line: message" on stderr), --help;
# scripts that would hang (budgets, hard stops in a child process), the
# space cap, where() determinism across list/compile/run, BOM and #!, M
# bounds.
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
cols=$(awk '/^M=/ {for (i = 4; i < NF; i++) s += $i} END {print s + 0}' "$T/counts")
nshape=$(grep -c '^M=' "$T/counts")
if [ -n "$total" ] && [ "$total" -gt 0 ] && [ "$total" = "$rows" ] && [ "$total" = "$cols" ]; then
    ok default_total_is_sum
else
    bad default_total_is_sum "total '$total', rows $rows, cells $cols"
fi
# bf16: 40 hidden sizes, 13 short rows and 12 past 16384; 12 + 3 for three
# more dtype combinations, 6 + 2 for fp32
[ "$nshape" = 118 ] && ok default_118_problems || bad default_118_problems "$nshape problems"
[ "$(grep -c '^M=[0-9]* N=[0-9]* x=bf16,w=bf16,dw=f32 ' "$T/counts")" = 65 ] && ok default_65_bf16_shapes ||
    bad default_65_bf16_shapes
[ "${total:-0}" -ge 1500 ] && [ "${total:-0}" -le 8000 ] && ok default_size || bad default_size "total $total"
expect default_list 0 list "$sweep"
lines=$(grep -c '^M=[0-9]* N=[0-9]* x=[a-z0-9]*,w=[a-z0-9]*,dw=f32 rmsnorm_bwd\.' "$T/out")
[ "$lines" = "$total" ] && ok default_lines_match_total || bad default_lines_match_total "$lines lines, total $total"
grep -q '^M=4096 N=1024 x=bf16,w=bf16,dw=f32 rmsnorm_bwd.persistent block=128,chunks=1,stages=2,k=0$' "$T/out" &&
    ok default_has_example || bad default_has_example
# every persistent line covers its row with at most one partly filled chunk
# (E = 8 elements a chunk, 4 for fp32)
awk '$4 == "rmsnorm_bwd.persistent" {
        n = substr($2, 3) + 0; split($5, kv, /[=,]/); b = kv[2]; c = kv[4]; e = $3 ~ /^x=f32/ ? 4 : 8;
        if (b * c * e < n || b * c * e - n >= b * e) bad++ }
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
[ "$(grep -c '^M=8 N=512 x=bf16,w=bf16,dw=f32 rmsnorm_bwd.persistent' "$T/out")" = 1 ] && ok small_persistent || bad small_persistent
grep -q '^problem .* total$' "$T/out" && ok small_no_budget_column || bad small_no_budget_column "$(grep '^problem' "$T/out")"
# a shape with a budget of its own: the counts get a column "budget", the
# shape's own there and - for the others; the total row stays the total
sed 's/{M = 8, N = 512}}/{M = 8, N = 512, budget = 3}}/' "$T/small.lua" >"$T/own.lua"
expect own_budget 0 list --count "$T/own.lua"
grep -q '^problem .* total  *budget$' "$T/out" && ok own_budget_header || bad own_budget_header "$(grep '^problem' "$T/out")"
[ "$(awk '$1 == "M=8" && $2 == "N=512" {print $NF}' "$T/out")" = 3 ] &&
    [ "$(awk '$1 == "M=8" && $2 == "N=1024" {print $NF}' "$T/out")" = - ] &&
    [ "$(awk '$1 == "total" {print $NF}' "$T/out")" = 11 ] && ok own_budget_rows || bad own_budget_rows "$(cat "$T/out")"

# random strategy: at most budget variants per shape, over the families
sed 's/^  },$/  }, search = {strategy = "random", budget = 3, seed = 1},/' "$T/small.lua" >"$T/random.lua"
expect random 0 list "$T/random.lua"
grep -q "strategy random" "$T/out" && ok random_strategy_shown || bad random_strategy_shown
n=$(grep -c '^M=8 N=1024 x=bf16,w=bf16,dw=f32 rmsnorm_bwd\.' "$T/out")
[ "$n" = 3 ] && ok random_budget || bad random_budget "$n lines for N=1024, want 3"
# a family's own search: naive drawn at random, 1 a shape, the sweep's
# (exhaustive) search over persistent: every persistent point listed, one
# naive line a shape; the same lines every time
sed 's/partial = {"bf16", "f32"}}},/partial = {"bf16", "f32"}},\
             search = {strategy = "random", budget = 1}},/' "$T/small.lua" >"$T/famrand.lua"
expect family_random 0 list "$T/famrand.lua"
nn=$(grep -c ' rmsnorm_bwd\.naive ' "$T/out")
np=$(grep -c ' rmsnorm_bwd\.persistent ' "$T/out")
[ "$nn" = 2 ] && [ "$np" = 3 ] && ok family_random_points || bad family_random_points "$nn naive lines (want 1 a shape), $np persistent (want 3)"
grep -q '^# .*strategy exhaustive; on their own: naive random 1$' "$T/out" && ok family_random_shown || bad family_random_shown "$(head -1 "$T/out")"
cp "$T/out" "$T/famrand.out"
expect family_random_again 0 list "$T/famrand.lua"
cmp -s "$T/out" "$T/famrand.out" && ok family_random_same || bad family_random_same

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
grep -q 'emptied.lua: M=8 N=512 x=bf16,w=bf16,dw=f32 (shapes\[2\]): no variant left after where constraints' "$T/err" &&
    ok emptied_message || bad emptied_message "$(cat "$T/err")"
printf 'os.execute("touch %s/pwned")\n' "$T" >"$T/os.lua"
expect sandbox 1 list "$T/os.lua"
[ ! -e "$T/pwned" ] && ok sandbox_no_effect || bad sandbox_no_effect

# ---- scripts that always end ----------------------------------------------
# Each script below would run for minutes (or forever) without the budgets;
# each runs under timeout, so that a hang fails rather than blocks.  The
# budget tests give 0.3 s of CPU and a wall-clock budget far away: the CPU
# budget is reached first however loaded the machine is, so the message
# does not depend on load.  The hard stop ends the process, so these run
# the CLI.
hdr='return normtune.sweep {
  op = "rmsnorm_bwd", shapes = {{M = 8, N = 1024}},
  families = {naive = {params = {nsplit = normtune.range(1, 1024), partial = {"bf16", "f32"}}'
# budgeted: expect_stop NAME SCRIPT PHASE -- exit 1 (not the timeout's 124),
# "SCRIPT...: stopped after ... PHASE (budget 0.3 s"
expect_stop() {
    NORMTUNE_SCRIPT_BUDGET=0.3,1000 timeout 120 "$NORMTUNE" list --count "$T/$2" >"$T/out" 2>"$T/err"; rc=$?
    if [ "$rc" = 1 ] && grep -q "$2.*stopped after .* $3 (budget 0.3 s" "$T/err"; then
        ok "$1"
    else
        bad "$1" "exit $rc: $(head -c 300 "$T/err")"
    fi
}
# a backtracking pattern runs in C: minutes with lua5.4, ended hard
printf 'local x = string.find(string.rep("a", 60), ".-.-.-.-.-.-.-.-b")\n%s}}}\n' "$hdr" >"$T/pattern.lua"
expect_stop pattern_load pattern.lua "of CPU while loading the script"
grep -q "did not stop within" "$T/err" && ok pattern_hard_stop || bad pattern_hard_stop "$(cat "$T/err")"
# an endless __gc finalizer: Lua runs no hooks there
printf 'setmetatable({}, {__gc = function() while true do end end})\ncollectgarbage()\n%s}}}\n' "$hdr" >"$T/gc.lua"
expect_stop gc_load gc.lua "of CPU while loading the script"
printf 'G = setmetatable({}, {__gc = function() while true do end end})\n%s}}}\n' "$hdr" >"$T/gc_close.lua"
expect_stop gc_close gc_close.lua "of CPU in a __gc finalizer while closing the script"
# a where() slow on every call (10-20 ms of Lua each, 2048 calls a walk, so
# minutes for the walks): a soft stop at the running line; then the same
# pattern in where(): a hard one
printf '%s,\n    where = function(p, s)\n      local x = 0\n      for i = 1, 4e6 do x = x + i end\n      return true\n    end}}}\n' "$hdr" >"$T/slow_where.lua"
expect_stop slow_where slow_where.lua "of CPU in where()"
grep -q "^normtune list: .*slow_where.lua:6: stopped after" "$T/err" && ok slow_where_line || bad slow_where_line "$(cat "$T/err")"
printf '%s,\n    where = function(p, s)\n      return not string.find(string.rep("a", 60), ".-.-.-.-.-.-.-.-b")\n    end}}}\n' "$hdr" >"$T/pattern_where.lua"
expect_stop pattern_where pattern_where.lua "of CPU in where()"
# the wall-clock budget alone (the CPU budget cannot come first)
NORMTUNE_SCRIPT_BUDGET=1000,0.3 timeout 120 "$NORMTUNE" list --count "$T/slow_where.lua" >"$T/out" 2>"$T/err"
[ $? = 1 ] && grep -q "stopped after .* of wall-clock time in where() (budget 0.3 s" "$T/err" &&
    ok wall_budget || bad wall_budget "$(cat "$T/err")"
# ... which ends C code too: the pattern, after the grace period
NORMTUNE_SCRIPT_BUDGET=1000,0.3 timeout 120 "$NORMTUNE" list --count "$T/pattern.lua" >"$T/out" 2>"$T/err"
[ $? = 1 ] && grep -q "stopped after .* of wall-clock time while loading the script (budget 0.3 s.*did not stop within" "$T/err" &&
    ok wall_budget_hard_stop || bad wall_budget_hard_stop "$(cat "$T/err")"
NORMTUNE_SCRIPT_BUDGET=soon "$NORMTUNE" list --count "$sweep" >"$T/out" 2>"$T/err"
[ $? = 1 ] && grep -q "NORMTUNE_SCRIPT_BUDGET must be" "$T/err" && ok bad_budget_env || bad bad_budget_env "$(cat "$T/err")"

# normtune.range without its step: refused before enumerating, naming the
# family, its dimensions, the product and the cap
sed 's/block = {64, 128}, chunks = {1, 2}, stages = {1}, k = {0}/block = normtune.range(32, 1024), chunks = normtune.range(1, 16), stages = {1, 2, 3, 4}, k = normtune.range(0, 32)/' "$T/small.lua" >"$T/nostep.lua"
start=$(date +%s)
timeout 60 "$NORMTUNE" list --count "$T/nostep.lua" >"$T/out" 2>"$T/err"; rc=$?
[ "$rc" = 1 ] && [ $(( $(date +%s) - start )) -le 2 ] && ok space_cap || bad space_cap "exit $rc"
has space_cap_message "$T/err" "nostep.lua:7: families.persistent.params: the space of family rmsnorm_bwd.persistent has 993 x 16 x 4 x 33 = 2097216 points (block x chunks x stages x k), more than the cap of 1048576"
# no progress line when stderr is not a terminal
sed 's/block = {64, 128}, chunks = {1, 2}, stages = {1}, k = {0}/block = normtune.range(32, 1024, 32), chunks = normtune.range(1, 16), stages = {1, 2, 3, 4}, k = normtune.range(0, 32)/; s/where = function(p, s) return p.block \* p.chunks \* 8 == s.N end,//' "$T/small.lua" >"$T/large.lua"
expect large_space 0 list --count "$T/large.lua"
[ ! -s "$T/err" ] && ok no_progress_off_terminal || bad no_progress_off_terminal "$(cat "$T/err")"

# a where() that is not deterministic fails list, list --count, compile and
# run alike, naming the shape; run before it touches the GPU or the database
sed 's/return p.block \* p.chunks \* 8 == s.N/return math.random() < 0.5/' "$T/small.lua" >"$T/random_where.lua"
sed 's/return p.block \* p.chunks \* 8 == s.N/calls = (calls or 0) + 1 return calls % 2 == 0/' "$T/small.lua" >"$T/state_where.lua"
for f in random_where state_where; do
    for cmd in "list" "list --count" "compile --arch sm_90a --no-cache" "run --db $T/$f.db"; do
        # shellcheck disable=SC2086
        "$NORMTUNE" $cmd "$T/$f.lua" >"$T/out" 2>"$T/err"; rc=$?
        name="${f}_$(echo "$cmd" | cut -d' ' -f1-2 | tr -c 'a-z\n' _)"
        if [ "$rc" = 1 ] && grep -q "$f.lua: where() is not deterministic: for M=8 N=[0-9]* x=bf16,w=bf16,dw=f32 (shapes\[[12]\])" "$T/err"; then
            ok "$name"
        else
            bad "$name" "exit $rc: $(head -c 300 "$T/err")"
        fi
    done
    [ ! -e "$T/$f.db" ] && ok "${f}_run_no_db" || bad "${f}_run_no_db"
done

# a UTF-8 BOM and a #! line, as lua5.4 takes them; error lines still right
{ printf '\357\273\277#!/usr/bin/env normtune\n'; cat "$T/small.lua"; } >"$T/bom.lua"
expect bom_shebang 0 list --count "$T/bom.lua"
[ "$(awk '$1 == "total" {print $NF}' "$T/out")" = 11 ] && ok bom_shebang_total || bad bom_shebang_total "$(tail -1 "$T/out")"
{ printf '\357\273\277#!/usr/bin/env normtune\n'; cat "$T/misspelt.lua"; } >"$T/bom_misspelt.lua"
expect bom_misspelt 1 list "$T/bom_misspelt.lua"
grep -q "bom_misspelt.lua:8: .*unknown parameter 'blok'" "$T/err" && ok bom_misspelt_line || bad bom_misspelt_line "$(cat "$T/err")"

# M bounded: sizes from M*N*bytes cannot overflow later
sed 's/{M = 8, N = 512}/{M = 2305843009213693952, N = 8}/' "$T/small.lua" >"$T/huge_m.lua"
expect huge_m 1 list --count "$T/huge_m.lua"
has huge_m_message "$T/err" "huge_m.lua:3: shapes[2].M must be at most 2147483647 (2^31 - 1), got 2305843009213693952"

rm -rf "$T"
echo "RESULT $passed $failed"
[ "$failed" = 0 ]
