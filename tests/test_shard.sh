#!/bin/sh
# test_shard.sh -- a sweep split over the tasks of a job array, on a CPU:
# `list --shard I/N` and `run --shard I/N` keep disjoint parts of a script's
# shapes that together are the whole sweep (its hidden sizes dealt whole,
# evening out the shards' problems; its shapes when there are fewer of them
# than shards); `run --simulate DB`
# runs the whole pipeline (search, store, resume) with the replay of DB's
# GPU in place of a GPU; the shards' databases merged hold the same results
# as one run of the whole sweep, and so does `run --devices LIST` (a
# process a GPU, here simulated ones, into one database at once).  Bad
# --shard, --devices and --simulate arguments are usage errors that touch
# no database.  tests/test_slurm.sh runs the same
# split under a real Slurm.
#
# Needs NORMTUNE and NT_TMP; prints PASS/FAIL lines and "RESULT passed failed".
NAME=test_shard
. "$(dirname "$0")/lib.sh"
db="$root/data/results.db"
export NORMTUNE_SCRIPT_BUDGET="${NORMTUNE_SCRIPT_BUDGET:-30,60}"

# the variant lines of `list` (problem, family, params), sorted
variants() { "$NORMTUNE" list "$@" 2>/dev/null | grep '^M=.* rmsnorm_' | sort; }

# --- list --shard: a partition of the default backward sweep ---------------
bwd="$root/lua/sweeps/rmsnorm_bwd.lua"
variants "$bwd" >"$T/all"
: >"$T/union"
for i in 0 1 2; do
    variants --shard "$i/3" "$bwd" >"$T/s$i"
    [ -s "$T/s$i" ] && ok "list_shard_${i}_of_3_nonempty" || bad "list_shard_${i}_of_3_nonempty"
    cat "$T/s$i" >>"$T/union"
    # the hidden sizes of this shard
    sed 's/^M=[0-9]* N=\([0-9]*\) .*/\1/' "$T/s$i" | sort -u >"$T/n$i"
done
sort "$T/union" | cmp -s - "$T/all" && ok list_shards_are_the_sweep ||
    bad list_shards_are_the_sweep "$(sort "$T/union" | diff - "$T/all" | head -3)"
[ -z "$(sort "$T/union" | uniq -d)" ] && ok list_shards_disjoint || bad list_shards_disjoint
[ -z "$(cat "$T/n0" "$T/n1" "$T/n2" | sort | uniq -d)" ] && ok shards_split_by_hidden_size ||
    bad shards_split_by_hidden_size "an N in two shards: $(cat "$T/n0" "$T/n1" "$T/n2" | sort | uniq -d | head -3)"
# the shards are about as long: their problem counts differ by at most the
# problems of one hidden size (each N goes whole to the shard with the
# fewest problems so far, the heaviest first)
"$NORMTUNE" list --count "$bwd" 2>/dev/null | awk '$1 ~ /^M=/ {print $2}' | sort | uniq -c |
    sort -n | tail -n 1 | awk '{print $1}' >"$T/maxcol"
for i in 0 1 2; do
    "$NORMTUNE" list --count --shard "$i/3" "$bwd" 2>&1 >/dev/null | sed -n 's/.*shard [0-9]*\/3: \([0-9]*\) of .*/\1/p'
done >"$T/sizes"
spread=$(sort -n "$T/sizes" | awk 'NR == 1 {lo = $1} {hi = $1} END {print hi - lo}')
maxcol=$(cat "$T/maxcol")
[ "$(wc -l <"$T/sizes")" = 3 ] && [ -n "$maxcol" ] && [ "$spread" -le "$maxcol" ] &&
    ok shards_balanced || bad shards_balanced "sizes $(tr '\n' ' ' <"$T/sizes"), one N has up to $maxcol"
"$NORMTUNE" list --count --shard 1/3 "$bwd" >/dev/null 2>"$T/err"
has list_shard_says_its_part "$T/err" "shard 1/3: "

# fewer hidden sizes than shards: the shapes themselves are dealt
cat >"$T/one_n.lua" <<'EOF'
return normtune.sweep {
  op = "rmsnorm_fwd",
  dtype = "bf16",
  shapes = {{M = 4096, N = 1024}, {M = 16384, N = 1024}, {M = 65536, N = 1024}},
  families = {row = {params = {block = {128, 256}, chunks = {1, 2}, k = {0}}}},
  search = {strategy = "exhaustive"},
}
EOF
: >"$T/union"
for i in 0 1 2; do
    variants --shard "$i/3" "$T/one_n.lua" >"$T/s$i"
    m=$(sed 's/^M=\([0-9]*\) .*/\1/' "$T/s$i" | sort -u | wc -l)
    [ "$m" = 1 ] && ok "one_n_shard_${i}_one_shape" || bad "one_n_shard_${i}_one_shape" "$m shapes"
    cat "$T/s$i" >>"$T/union"
done
variants "$T/one_n.lua" >"$T/all1"
sort "$T/union" | cmp -s - "$T/all1" && ok one_n_shards_are_the_sweep || bad one_n_shards_are_the_sweep

# more shards than shapes: an empty shard is nothing to do, not an error
expect empty_shard_exit_0 0 list --shard 5/8 "$T/one_n.lua"
has empty_shard_says_so "$T/err" "has no shape of"

# --- bad --shard values: usage errors -------------------------------------
for v in 3/3 -1/3 1/0 a/b 1/2x 1 /2 0/5000; do
    expect "bad_shard_$v" 2 list --shard "$v" "$T/one_n.lua"
    has "bad_shard_message_$v" "$T/err" "--shard"
done

# --- run --simulate: shards, merge, the same results as one run -----------
cp "$root/tests/shard_sweep.lua" "$T/sim.lua"
sum_before=$(cksum <"$db")
need_sqlite3 "the simulated runs' databases"
expect simulate_whole_runs 0 run "$T/sim.lua" --simulate "$db" --db "$T/whole.db"
has simulate_says_no_gpu "$T/err" "(no GPU)"
for i in 0 1 2; do
    expect "simulate_shard_${i}_runs" 0 run "$T/sim.lua" --simulate "$db" --shard "$i/3" --db "$T/part$i.db"
done
expect merge_three 0 merge "$T/part0.db" "$T/part1.db" "$T/part2.db" -o "$T/merged.db"
has merge_three_counts "$T/err" " from $T/part2.db; 0 in an earlier input too"
# two at a time folds to the same results
expect merge_01 0 merge "$T/part0.db" "$T/part1.db" -o "$T/m01.db"
expect merge_012 0 merge "$T/m01.db" "$T/part2.db" -o "$T/m012.db"
result_keys "$T/whole.db" >"$T/k_whole"
result_keys "$T/merged.db" >"$T/k_merged"
[ -s "$T/k_whole" ] && cmp -s "$T/k_whole" "$T/k_merged" && ok merged_shards_are_the_whole_run ||
    bad merged_shards_are_the_whole_run "$(diff "$T/k_whole" "$T/k_merged" | head -3)"
result_keys "$T/m012.db" | cmp -s - "$T/k_merged" && ok merge_pairwise_same || bad merge_pairwise_same
# one input: a checked copy; an input merged after itself adds nothing
expect merge_one_input 0 merge "$T/part1.db" -o "$T/copy1.db"
result_keys "$T/part1.db" >"$T/k_p1"
result_keys "$T/copy1.db" | cmp -s - "$T/k_p1" && ok merge_one_input_copies || bad merge_one_input_copies
expect merge_repeated_input 0 merge "$T/part1.db" "$T/part1.db" "$T/part2.db" -o "$T/rep.db"
has merge_repeated_counts "$T/err" "0 from $T/part1.db, "
expect merge_no_input 2 merge -o "$T/none.db"
n_ok=$(sqlite3 "$T/merged.db" "select count(*) from result where status = 'ok'")
[ "${n_ok:-0}" -gt 0 ] && ok simulated_results_ok || bad simulated_results_ok "no ok result"
dev=$(sqlite3 "$T/merged.db" "select group_concat(name) from device")
[ "$dev" = "simulated NVIDIA H200" ] && ok simulated_device_apart || bad simulated_device_apart "devices: $dev"
# a second run resumes: everything reused, nothing measured
expect simulate_resume_runs 0 run "$T/sim.lua" --simulate "$db" --shard 1/3 --db "$T/part1.db"
has simulate_resume_reuses "$T/err" ": 0 measured"
# the header of the merged shards tunes every shape
expect export_merged 0 export --db "$T/merged.db" -o "$T/merged.h"
has export_merged_all_shapes "$T/err" "6 tuned shapes"

# --- run --devices: a process a GPU (here simulated), one database ---------
expect devices_runs 0 run "$T/sim.lua" --simulate "$db" --devices 0,1,2 --db "$T/dev.db"
result_keys "$T/dev.db" | cmp -s - "$T/k_whole" && ok devices_are_the_whole_run ||
    bad devices_are_the_whole_run "$(result_keys "$T/dev.db" | diff - "$T/k_whole" | head -3)"
for k in 0 1 2; do
    has "devices_worker_${k}_labelled" "$T/err" "[worker $k] normtune run: shard $k/3: "
done
has devices_all_done "$T/err" "the 3 shards are done"
expect devices_one_runs 0 run "$T/sim.lua" --simulate "$db" --devices 0 --db "$T/dev1.db"
has devices_one_done "$T/err" "its 1 shard is done"
expect devices_resume 0 run "$T/sim.lua" --simulate "$db" --devices 0,1,2 --db "$T/dev.db"
[ "$(grep -c ': 0 measured' "$T/err")" = 3 ] && ok devices_resume_reuses ||
    bad devices_resume_reuses "$(grep 'measured' "$T/err" | head -3)"
for v in 0,0 x 1,,2 -1 all; do
    expect "devices_bad_$v" 2 run "$T/sim.lua" --simulate "$db" --devices "$v" --db "$T/d2.db"
    has "devices_bad_message_$v" "$T/err" "--devices"
done
expect devices_with_gpu 2 run "$T/sim.lua" --simulate "$db" --devices 0,1 --gpu 1 --db "$T/d2.db"
expect devices_with_shard 2 run "$T/sim.lua" --simulate "$db" --devices 0,1 --shard 0/2 --db "$T/d2.db"
[ ! -e "$T/d2.db" ] && ok devices_usage_writes_nothing || bad devices_usage_writes_nothing

# --- another run of the whole script into the same database: a warning ----
# (the first run's sweep made to read as still running, by this live shell)
expect peer_first_run 0 run "$T/sim.lua" --simulate "$db" --db "$T/peer.db"
sqlite3 "$T/peer.db" "UPDATE sweep SET status = 'running', pid = $$"
expect peer_second_run 0 run "$T/sim.lua" --simulate "$db" --db "$T/peer.db"
has peer_warned "$T/err" "warning: another run of $T/sim.lua (pid $$,"
expect peer_shard_run 0 run "$T/sim.lua" --simulate "$db" --shard 0/2 --db "$T/peer.db"
grep -q "another run of" "$T/err" && bad peer_shard_not_warned || ok peer_shard_not_warned
sqlite3 "$T/peer.db" "UPDATE sweep SET status = 'done', pid = 1"
expect peer_gone_run 0 run "$T/sim.lua" --simulate "$db" --db "$T/peer.db"
grep -q "another run of" "$T/err" && bad peer_ended_not_warned || ok peer_ended_not_warned

# --- bad --simulate use: usage errors, nothing written ---------------------
expect simulate_into_itself 2 run "$T/sim.lua" --simulate "$T/whole.db" --db "$T/whole.db"
has simulate_into_itself_message "$T/err" "must be another file"
expect simulate_with_device 2 run "$T/sim.lua" --simulate "$db" --device H200 --db "$T/x.db"
has simulate_with_device_message "$T/err" "runs on no GPU"
[ ! -e "$T/x.db" ] && ok usage_error_writes_nothing || bad usage_error_writes_nothing
expect simulate_missing_db 1 run "$T/sim.lua" --simulate "$T/none.db" --db "$T/y.db"
[ "$(cksum <"$db")" = "$sum_before" ] && ok simulated_db_untouched || bad simulated_db_untouched
finish
