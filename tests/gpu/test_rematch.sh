#!/bin/sh
# test_rematch.sh -- warm's last step on a GPU: the variants within 2% of
# the pick (here three with the same code) are measured again, in turn,
# each with NT_REMATCH_ROUNDS x NT_REMATCH_SAMPLES samples; the re-measure
# is stored (table rematch), `best` names one of them, and a second run of
# the same sweep finds it stored: nothing measured, nothing re-measured.
# Then the same sweep with search.remeasure = "alone" over that database:
# the three measured again, each run alone after an L2 flush (method
# 'alone', each median above the chain one: alone, a run carries its
# launch, which a chain overlaps), and a run after it re-measures nothing.
# Last, `run --strategy exhaustive --remeasure alone` into a new database:
# every variant measured, then the three re-measured alone.
NAME=rematch
. "$(dirname "$0")/../lib.sh"
NORMTUNE=${NORMTUNE:-build/normtune}
script=$(dirname "$0")/rematch.lua
root=$(dirname "$0")/../..
per=$(sed -n 's/^#define NT_REMATCH_ROUNDS \([0-9]*\).*/\1/p' "$root/kernels/nt.h")
smp=$(sed -n 's/^#define NT_REMATCH_SAMPLES \([0-9]*\).*/\1/p' "$root/kernels/nt.h")
q() { python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$T/a.db" "$1"; }
expect first 0 run "$script" --settle 0 --db "$T/a.db"
has says_so "$T/err" "the variants within 2% of the pick measured again, in turn"
[ "$(q 'SELECT count(*) FROM rematch')" = 3 ] && ok three_rows || bad three_rows "$(q 'SELECT count(*) FROM rematch')"
[ "$(q "SELECT count(*) FROM rematch WHERE n_samples = $((per * smp)) AND median_us > 0 AND rank_us > 0")" = 3 ] &&
    ok samples_and_medians || bad samples_and_medians
[ "$(q 'SELECT count(*) FROM best b JOIN rematch m ON m.result_id = b.result_id')" = 1 ] &&
    ok best_is_one_of_them || bad best_is_one_of_them
[ "$(q 'SELECT count(*) FROM best b JOIN rematch m ON m.result_id = b.result_id WHERE m.rank_us = (SELECT min(rank_us) FROM rematch)')" = 1 ] &&
    ok best_is_the_fastest_re_measured || bad best_is_the_fastest_re_measured
expect second 0 run "$script" --settle 0 --db "$T/a.db"
has nothing_measured "$T/err" "0 measured"
grep -qF "measured again, in turn" "$T/err" && bad not_again || ok not_again
[ "$(q 'SELECT count(*) FROM rematch')" = 3 ] && ok still_three || bad still_three
sed 's/search = {strategy = "warm"}/search = {strategy = "warm", remeasure = "alone"}/' \
    "$script" >"$T/alone.lua"
grep -q 'remeasure = "alone"' "$T/alone.lua" && ok alone_script || bad alone_script
expect alone 0 run "$T/alone.lua" --settle 0 --db "$T/a.db"
has alone_says_so "$T/err" "measured again, in turn, each run alone after an L2 flush"
[ "$(q "SELECT count(*) FROM rematch WHERE method = 'alone' AND n_samples = $((per * smp))")" = 3 ] &&
    ok three_alone_rows || bad three_alone_rows "$(q "SELECT count(*) FROM rematch WHERE method = 'alone'")"
[ "$(q "SELECT count(*) FROM rematch a JOIN rematch c ON c.result_id = a.result_id AND c.method = 'chain' WHERE a.method = 'alone' AND a.median_us > c.median_us")" = 3 ] &&
    ok alone_slower_than_chain || bad alone_slower_than_chain
expect alone_again 0 run "$T/alone.lua" --settle 0 --db "$T/a.db"
grep -qF "measured again, in turn" "$T/err" && bad alone_not_again || ok alone_not_again
[ "$(q 'SELECT count(*) FROM rematch')" = 6 ] && ok six_rows || bad six_rows
expect exhaustive_alone 0 run "$script" --settle 0 --db "$T/e.db" --strategy exhaustive \
    --remeasure alone
qe() { python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$T/e.db" "$1"; }
[ "$(qe "SELECT count(*) FROM rematch WHERE method = 'alone'")" = 3 ] &&
    [ "$(qe 'SELECT count(*) FROM result')" = 3 ] && ok exhaustive_three_alone ||
    bad exhaustive_three_alone "$(qe 'SELECT count(*) FROM rematch')"
finish
