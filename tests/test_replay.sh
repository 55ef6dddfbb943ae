#!/bin/sh
# test_replay.sh -- `normtune replay` on the shipped data/results.db: the
# summary line's exact form, an exhaustive replay that finds every stored
# best, a warm replay from the neighbouring shapes that spends a fraction
# of the sweep, and usage errors.  Nothing here depends on the machine's
# speed: the simulated device answers from stored samples by seed.
NAME=test_replay
. "$(dirname "$0")/lib.sh"
db="$root/data/results.db"
# the campaigns below walk the default backward sweep's where() once per
# seed (about 0.4 s of CPU each here): a budget far from the default's 5 s
# of CPU and 7 of wall clock, so that a loaded machine cannot stop them
export NORMTUNE_SCRIPT_BUDGET="${NORMTUNE_SCRIPT_BUDGET:-30,60}"
bwd="$root/lua/sweeps/rmsnorm_bwd.lua"
line='^replay: [a-z]* spent [0-9.]*% of the sweep, [0-9.]*% of shapes within 2%, worst [0-9]*\.[0-9][0-9]x$'

# summary NAME COND: the last line of $T/out, a warm replay's summary, holds
# COND (awk, over spent $1, within $2 and worst $3: e.g. "$1 <= 10")
summary() {
    last=$(tail -n 1 "$T/out")
    set -- "$1" "$2" $(echo "$last" | sed -n 's/^replay: [a-z]* spent \([0-9.]*\)% of the sweep, \([0-9.]*\)% of shapes within 2%, worst \([0-9.]*\)x$/\1 \2 \3/p')
    cond=$(echo "$2" | sed 's/\$1/s/g; s/\$2/w/g; s/\$3/x/g')
    if [ -n "$3" ] && awk -v s="$3" -v w="$4" -v x="$5" "BEGIN { exit !($cond) }"; then
        ok "$1"
    else
        bad "$1" "$last"
    fi
}

expect exhaustive_runs 0 replay --db "$db" "$bwd" --strategy exhaustive
last=$(tail -n 1 "$T/out")
if echo "$last" | grep -q "$line"; then ok last_line_form; else bad last_line_form "$last"; fi
# every point measured: every pick within 2%, and within 1% of the stored
# best (replay answers each measurement with one stored sample, so two
# points whose medians are a few tenths of a percent apart can swap)
summary exhaustive_finds_every_best '$1 == 100.0 && $2 == 100.0 && $3 <= 1.01'
has table_names_a_shape "$T/out" "M=65536 N=16384 x=f32,w=f32,dw=f32"

# warm from the other shapes of the model: 6 per shape is 11.1% of the
# default backward sweep (every problem of it is stored whole: swept
# exhaustively on H200s), and picks within 2% of the stored best at 97% of
# the shapes or more, none worse than 1.03x (100% and 1.02x here, 1.01x
# before hints that cannot run here stood for their nearest runnable
# point, search/drive.c TRANSLATE; 100% and 1.01x, 14.4% of the sweep,
# before the sweep took wstage)
expect warm_runs 0 replay --db "$db" "$bwd" --strategy warm --budget 6 --stored neighbours
summary warm_neighbours_within_2pct '$1 == 11.1 && $2 >= 97 && $3 <= 1.03'
# the backward from its neighbours at 5 per shape, 5 seeds: at most 10% of
# the sweep, 97% of the shapes within 2%, no pick worse than 1.03x (9.3%,
# 100% and 1.02x here, also over 20 seeds).  The goal held (1.02x) until
# the short rows were measured again on one GPU
# (data/grid-h200/same_gpu.txt, 2026-12-03): at 65536 x 768 one wstage
# config (128 threads, 3 chunks, 2 stages, k 2) is 4% ahead of every other
# point, its siblings 8-10% behind, and 5 proposals reached only warp's
# best (99.2% and 1.04x) until the hints that cannot run here, within 2%
# of the first one's score, stood for their nearest runnable point (its
# 4-chunk sibling of N = 1024 is 4th; search/drive.c TRANSLATE).  At 4 per
# shape, 7.4%, 99.7% and 1.06x (97.8% before; 95.8% and 1.09x since the
# sweep took wstage, 9.6%, 98.3% and 1.03x before; 97.5% and 1.04x before
# the best of the other dtype combinations at the same shape went second:
# at 4096 x 1024 bf16 warp with 256 threads a block wins in every
# combination with 16-bit x, and the hints from bf16's other M ranked it
# 14th)
expect bwd_neighbours_runs 0 replay --db "$db" "$bwd" --strategy warm --budget 5 --stored neighbours --seeds 5
summary bwd_neighbours_goal '$1 <= 10 && $2 >= 97 && $3 <= 1.03'
grep -q '^M=4096 N=1024 x=bf16,w=bf16,dw=f32  *[0-9]*  *[0-9.]*  *100%  *[0-9.]*x$' "$T/out" &&
    ok bwd_neighbours_agreed_best ||
    bad bwd_neighbours_agreed_best "$(grep '^M=4096 N=1024 x=bf16,w=bf16,' "$T/out")"
# the forward from its neighbours at 5 per shape: under 10% of the sweep,
# 97% of the shapes within 2% or more and none worse than 1.03x (99.2% and
# 1.03x here since the sweep took the grid, 100% and 1.02x before; the
# hints follow each point's trend over the nearby shapes: by its mean
# ratio alone, 94.7%)
expect fwd_neighbours_runs 0 replay --db "$db" "$root/lua/sweeps/rmsnorm_fwd.lua" --strategy warm --budget 5 --stored neighbours
summary fwd_neighbours_trend '$1 <= 10 && $2 >= 97 && $3 <= 1.03'
# the default scripts as they are (no --budget): from the neighbours their
# budget_stored (5) holds, not their cold campaign's budget (13 and 8), so
# the goal is met at the scripts' own settings (the backward 9.3%, 100%
# and 1.02x here, above, 99.2% and 1.04x before TRANSLATE; 23.1% of the
# sweep at 13, 100% and 1.01x; the forward 9.9%, 99.2% and 1.03x, 9.7%,
# 100% and 1.02x before the grid, 15.5% at 8)
expect bwd_default_neighbours_runs 0 replay --db "$db" "$bwd" --strategy warm --stored neighbours
summary bwd_default_neighbours_goal '$1 <= 10 && $2 >= 97 && $3 <= 1.03'
has bwd_default_names_budget_stored "$T/out" "strategy warm, budget 13, budget_stored 5, 1 seed"
expect fwd_default_neighbours_runs 0 replay --db "$db" "$root/lua/sweeps/rmsnorm_fwd.lua" --strategy warm --stored neighbours
summary fwd_default_neighbours_goal '$1 <= 10 && $2 >= 97 && $3 <= 1.03'
# a problem the database does not hold whole (N = 1032: never swept) is not
# scored, and replay says so; its row has dashes
sed 's/^local shapes = normtune.grid({64, 128, 256}/local shapes = normtune.grid({64, 128, 256, 1032}/' \
    "$root/lua/sweeps/rmsnorm_bwd_short.lua" > "$T/part.lua"
expect partial_runs 0 replay --db "$db" "$T/part.lua" --strategy warm --stored neighbours
has unscored_note "$T/err" "problems are not stored whole"
grep -q '^M=65536 N=1032 x=bf16,w=bf16,dw=f32  *[0-9]*  *[0-9.]*  *-  *-$' "$T/out" &&
    ok unscored_row_dashes || bad unscored_row_dashes "$(grep '^M=65536 N=1032 ' "$T/out")"
grep -q '^M=65536 N=128 x=bf16,w=bf16,dw=f32  *[0-9]*  *[0-9.]*  *[0-9]*%  *[0-9.]*x$' "$T/out" &&
    ok scored_row || bad scored_row "$(grep '^M=65536 N=128 ' "$T/out")"

# a cold campaign (nothing stored) of the default backward, at the script's
# budget (13 per shape on average), 5 seeds: at most 25% of the sweep, 90%
# of the shapes within 2% of the stored best, no pick worse than 1.05x
# (21.6%, 95.9% and 1.05x here: 262144 x 128 f32 and 65536 x 1024; the
# default seed 21.8%, 94.1% and 1.05x; 20 seeds 95.3% and 1.08x, 65536 x
# 64).  The goal of 1.05x was met (95.3%) until the short rows and N = 1024
# were measured again on one GPU, data/grid-h200/same_gpu.txt (94.2% and
# 1.08x then, 89.8% at the default seed), and is met again since the last
# proposal of each search that does not explore is the climb's
# (search/drive.c CLIMB: the model learns k 1 at N = 4096); before the sweep
# took wstage, whose standings against warp's at short rows are close,
# 21.9%, 98.0% and 1.05x at 10 per shape; 1.06x with the portfolio's 1%
# floor of the runs from stored results, 1.13x with the anchors at the
# middle M, no cross pass and the climb's neighbours in the space's order.
# The anchors (twice the budget, about 26 a shape against the others' 11,
# the cross pass's one included) are the smallest M of each N of bf16, the
# dtype combination with the most shapes; the other combinations follow its
# results
expect cold_runs 0 replay --db "$db" "$bwd" --strategy warm --stored none --seeds 5
summary cold_within_budget '$1 <= 25 && $2 >= 90 && $3 <= 1.05'
anchors=$(awk '$1 ~ /^M=/ && $5 + 0 >= 15 && $3 ~ /^x=bf16,w=bf16,/' "$T/out" | wc -l)
others=$(awk '$1 ~ /^M=/ && $5 + 0 >= 15 && $3 !~ /^x=bf16,w=bf16,/' "$T/out" | wc -l)
nN=$(awk '$1 ~ /^M=/ && $3 ~ /^x=bf16,w=bf16,/ { print $2 }' "$T/out" | sort -u | wc -l)
# an anchor whose M is not the smallest of its N (M=, N= fields)
notmin=$(awk '$1 ~ /^M=/ && $3 ~ /^x=bf16,w=bf16,/ {
                m = substr($1, 3) + 0; n = $2
                if (!(n in lo) || m < lo[n]) lo[n] = m
                if ($5 + 0 >= 15) am[n] = m }
              END { for (n in am) if (am[n] != lo[n]) print n }' "$T/out" | wc -l)
[ "$anchors" = "$nN" ] && [ "$others" = 0 ] && [ "$notmin" = 0 ] && ok cold_anchors_smallest_m_in_bf16 ||
    bad cold_anchors_smallest_m_in_bf16 "$anchors anchors for $nN hidden sizes, $others outside bf16, $notmin not at the smallest M"
# the forward's cold campaign at its budgets (8 a core shape, 5 at each of
# the grid's other shapes, tuned after the rest, as from stored results):
# within 15% of the sweep, 97% of the shapes within 2%, the worst 1.05x
# (13.7%, 97.8% and 1.05x here over these 5 seeds; the default seed
# 13.6%, 98.1% and 1.04x; searched cold, those shapes gave 96.5% and
# 96.6%).
# Before the grid (188 problems, 8 a shape): 14.8%, 99.0% and 1.06x here,
# 98.0% and 1.08x over 20; with the grid at 8 a shape, 15.2%, 91.7% and
# 1.11x (docs/lua-api.md)
expect fwd_cold_runs 0 replay --db "$db" "$root/lua/sweeps/rmsnorm_fwd.lua" --strategy warm --stored none --seeds 5 --misses
summary fwd_cold_within_budget '$1 <= 15 && $2 >= 97 && $3 <= 1.05'
# --misses: a line per (shape, seed) run past 2%, as many as the table's
# rows say (each row's share within 2% is of 5 seeds), the largest of a
# shape's ratios its row's worst, each 1.020x or more (past 1.02, printed
# to three places), and the best's stored median below the pick's
why=$(awk '$1 ~ /^M=/ && $6 ~ /%$/ { key = $1 " " $2 " " $3; rows += (100 - $6) / 20; worst[key] = $7 }
           /^# misses: / { said = $3 }
           /^miss / { n++; key = $2 " " $3 " " $4; r = $7; sub(/x,$/, "", r); r += 0
                      if (r < 1.02) print "ratio " r " at " key
                      if (!(key in top) || r > top[key]) top[key] = r
                      us = $0; sub(/.*; best .*\(/, "", us); sub(/ us\)$/, "", us)
                      pu = $0; sub(/ us\); best .*/, "", pu); sub(/.*\(/, "", pu)
                      if (us + 0 >= pu + 0) print "best " us " not below the pick " pu " at " key }
           END { if (said != n || n != rows) print said " said, " n " lines, " rows " from the rows"
                 for (k in top) if (sprintf("%.3fx", top[k]) != worst[k]) print k ": " top[k] " against " worst[k] }' "$T/out")
[ -z "$why" ] && grep -q '^# misses: ' "$T/out" && tail -n 1 "$T/out" | grep -q "$line" &&
    ok misses_agree_with_table || bad misses_agree_with_table "$why"

# the stored best is over the points the script keeps: a result of a point
# its where() refuses (stored by another sweep) is no best its search could
# find.  At 8192 x 512 bf16 warp with 16 threads a row is 6% ahead of 32
# (data/results.db); with 16 refused, every point of the exhaustive replay
# is measured and its pick is the best (before: 0% within 2%, 1.06x)
cat > "$T/narrow.lua" <<'EOF2'
return normtune.sweep {
  op = "rmsnorm_fwd",
  dtype = "bf16",
  shapes = {{M = 8192, N = 512}},
  families = {warp = {params = {tpr = {16, 32}, block = {128, 256, 512}, chunks = {2, 4}, k = {0}},
                      where = function(p, s) return p.tpr * p.chunks * 8 == s.N and p.tpr == 32 end}},
  search = {strategy = "exhaustive"},
}
EOF2
expect narrow_runs 0 replay --db "$db" "$T/narrow.lua" --strategy exhaustive
summary narrow_best_of_kept_points '$1 == 100.0 && $2 == 100.0 && $3 <= 1.01'
sed 's/ and p.tpr == 32 end/ end/' "$T/narrow.lua" > "$T/wide.lua"
expect wide_runs 0 replay --db "$db" "$T/wide.lua" --strategy exhaustive --misses
has wide_no_misses "$T/out" "# misses: 0 (shape, seed) runs"
grep -q '^M=8192 N=512 x=bf16,w=bf16  *6  *6.0  *100%' "$T/out" && ok wide_keeps_both ||
    bad wide_keeps_both "$(grep '^M=8192 ' "$T/out")"
# --strategy searches the whole sweep: a family's own search is dropped
# (the wide script's 6 points with the warp family searched exhaustively
# on its own; replayed random with a budget of 2, 2 a shape are spent)
sed 's/k = {0}},/k = {0}}, search = {strategy = "exhaustive"},/' "$T/wide.lua" > "$T/own.lua"
expect own_search_dropped_runs 0 replay --db "$db" "$T/own.lua" --strategy random --budget 2
grep -q '^M=8192 N=512 x=bf16,w=bf16  *6  *2.0 ' "$T/out" && ok own_search_dropped ||
    bad own_search_dropped "$(grep '^M=8192 ' "$T/out")"
# without --strategy, the script's searches: the family's own, exhaustive
sed 's/^  search = {strategy = "exhaustive"},$/  search = {strategy = "random", budget = 2},/' "$T/own.lua" > "$T/own2.lua"
expect own_search_kept_runs 0 replay --db "$db" "$T/own2.lua"
grep -q '^M=8192 N=512 x=bf16,w=bf16  *6  *6.0  *100% ' "$T/out" && ok own_search_kept ||
    bad own_search_kept "$(grep '^M=8192 ' "$T/out")"
tail -n 1 "$T/out" | grep -q '^replay: random spent 100.0% of the sweep' && ok own_search_kept_line ||
    bad own_search_kept_line "$(tail -n 1 "$T/out")"

# --verbose: a line per simulated measurement on stderr, each seed's after
# '# seed K' and numbered from 1, as many as the table's variants spent
# (its spent column is the mean over the seeds)
expect verbose_runs 0 replay --db "$db" "$T/wide.lua" --strategy random --budget 2 --seeds 3 --verbose
why=$(awk '/^# seed / { if ($3 != s + 0) print "seed " $3 " after " s; s++; want = 1; next }
           /^\[[0-9]+\] M=8192 N=512 x=bf16,w=bf16 rmsnorm_fwd\.warp tpr=[0-9]+,/ {
               if ($1 != "[" want "]") print "line " $1 " where [" want "] was due"; want++; n++
               if ($NF != "us" || $(NF - 2) != "ok") print "no median in: " $0; next }
           { print "unexpected: " $0 }
           END { if (s != 3 || n != 6) print s " seeds, " n " lines" }' "$T/err")
[ -z "$why" ] && ok verbose_lines_per_seed || bad verbose_lines_per_seed "$why"
expect verbose_bwd_runs 0 replay --db "$db" "$bwd" --strategy warm --budget 5 --stored neighbours --verbose
spent=$(awk '$1 ~ /^M=/ && $5 ~ /^[0-9.]+$/ { t += $5 } END { printf "%d", t }' "$T/out")
lines=$(grep -c '^\[[0-9]*\] M=' "$T/err")
[ "$spent" -gt 0 ] && [ "$spent" = "$lines" ] && ok verbose_lines_as_spent ||
    bad verbose_lines_as_spent "$lines lines, $spent spent in the table"

expect bad_stored 2 replay --db "$db" "$bwd" --strategy warm --stored all
has bad_stored_message "$T/err" "--stored takes none, neighbours or model"
expect bad_strategy 2 replay --db "$db" "$bwd" --strategy anneal
has bad_strategy_message "$T/err" "unknown strategy 'anneal'"
expect needs_db 2 replay "$bwd" --strategy warm
has needs_db_message "$T/err" "needs --db FILE and one SCRIPT"
finish
