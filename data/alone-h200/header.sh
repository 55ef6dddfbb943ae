#!/bin/sh
# header.sh -- the H200 call for a header ranked the way `make bench` times
# a call: the default sweeps (each op's lua/sweeps/<op>.lua and its
# <op>_n8.lua), exhaustive, on a copy of data/results.db (REF.db.xz,
# below), so that every point is reused (every default problem is stored
# whole there, from H200s) and at each problem the stored results within
# 6% of its best, the fastest six, are timed again on this GPU, each run
# alone after an L2 flush (`--remeasure alone`, docs/lua-api.md
# `search.remeasure`).  The export of that database ranks those problems
# by that re-measure.
#
# Why: the back-to-back timing the header is ranked by hides each call's
# launch and first blocks, which a call in a training step pays.  At the
# 16 shapes of ../alone-h200/remeasure/ the chain's pick was 0.2-2.0%
# slower alone than the alone pick at 9 of 13 problems re-measured, the
# forward's short rows among them (131072 x 64: 1.5%, 262144 x 128: 2.0%),
# where QuACK's y is ahead of the shipped header by 1-5% in make bench
# (../bench-h200/run9/peers_fwd.md).
#
# What comes back, in $OUT/alone.tar.xz (folder alone/): gpu.txt, a log a
# sweep, times.txt, alone_dispatch.h (the header exported from that
# database), rematch.csv (every alone re-measure: problem, family,
# params, the result's stored median and its alone median), picks.txt
# (per problem the pick by the stored medians, the pick alone, and the
# first's time alone over the second's) and
# rematch.db.xz (the database with only the re-measured results, their
# samples and re-measures, for `normtune merge rematch.db
# data/results.db -o new.db` here).  On a GPU that is not an H200 it stops
# at once with exit 3, even under ../pending-h200/run.sh's ANY_GPU=1
# (ALONE_ANY_GPU=1 runs anyway: another model reuses nothing of
# data/results.db and measures every point, far more than one call
# holds).  SIMULATE=DB runs it without a GPU, the times drawn from DB's
# samples (normtune run --simulate), to check the script.
#   here:  xz -T8 -6 -c data/results.db > .devbuild/ref.db.xz   (12 MB;
#          results.db itself is out of the travelling tree: 64 MiB)
#   there: sh data/alone-h200/header.sh .devbuild/bin.tar.xz .devbuild/ref.db.xz [SECONDS]
# SECONDS: the time the sweeps may take in all (default 420).  What it
# costs: nothing is measured but the re-measures, about 300 problems of
# up to six points, whose kernels (about 2400) the run compiles, each
# re-measure's at once in the runner's pool (about 0.2 s a kernel on one
# CPU), then times alone (an L2 flush of 256 MB before each sample).
set -u
[ $# -ge 2 ] && [ -r "$1" ] && [ -r "$2" ] ||
    { echo "usage: sh data/alone-h200/header.sh BIN.tar.xz REF.db.xz [SECONDS]" >&2; exit 2; }
case "${3:-420}" in *[!0-9]* | "") echo "header.sh: SECONDS must be a whole number, got '$3'" >&2; exit 2 ;; esac
limit=${3:-420}
sim=
if [ -n "${SIMULATE:-}" ]; then
    sim="--simulate $SIMULATE"
elif [ "${ALONE_ANY_GPU:-0}" != 1 ] && ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    echo "header.sh: not an H200 ($(nvidia-smi --query-gpu=name --format=csv,noheader)); ALONE_ANY_GPU=1 runs anyway" >&2
    exit 3
fi
[ -x build/normtune ] || { mkdir -p build && tar -xJf "$1" -C build; } || exit 1
L=$OUT/alone
mkdir -p "$L"
[ -n "$sim" ] && echo "simulated from $SIMULATE" > "$L/gpu.txt" ||
    nvidia-smi --query-gpu=name,uuid,clocks.max.memory --format=csv > "$L/gpu.txt"
db=${TMPDIR:-/tmp}/alone.db
[ -e "$db" ] || xz -dc "$2" > "$db" || exit 1
t0=$(date +%s)
stamp() { echo "$1: $(( $(date +%s) - t0 )) s" >> "$L/times.txt"; }
settle=
for d in kernels/*/; do
    op=$(basename "$d")
    for s in lua/sweeps/$op.lua lua/sweeps/${op}_n8.lua; do
        [ -e "$s" ] || continue
        left=$(( limit - ($(date +%s) - t0) ))
        if [ "$left" -lt 10 ]; then
            echo "$s: left out (${left} s left)" >> "$L/times.txt"
            continue
        fi
        n=$(basename "$s" .lua)
        # shellcheck disable=SC2086
        timeout "$left" build/normtune run "$s" --db "$db" --strategy exhaustive --remeasure alone \
            $settle $sim > "$L/$n.log" 2>&1
        echo "rc=$?" >> "$L/$n.log"
        stamp "$n"
        settle='--settle 0'
    done
done
build/normtune export --db "$db" --newest -o "$L/alone_dispatch.h" > "$L/export.log" 2>&1
echo "rc=$?" >> "$L/export.log"
python3 - "$db" "$L/rematch.csv" "$L/rematch.db" <<'EOF' > "$L/reduce.log" 2>&1
import csv, shutil, sqlite3, sys
src, out_csv, out_db = sys.argv[1:4]
con = sqlite3.connect(src)
rows = con.execute("""
    SELECT s.op, s.dtype, s.M, s.N, v.family, v.params, r.median_us, m.median_us, m.n_samples, m.grp
    FROM rematch m JOIN result r ON r.id = m.result_id JOIN variant v ON v.id = r.variant_id
    JOIN shape s ON s.id = r.shape_id WHERE m.method = 'alone'
    ORDER BY s.op, s.dtype, s.N, s.M, m.median_us""").fetchall()
with open(out_csv, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["op", "dtype", "M", "N", "family", "params", "chain_us", "alone_us", "n_samples", "grp"])
    w.writerows(rows)
con.close()
# picks.txt: per re-measured problem, the pick by the stored (back-to-back)
# medians and the pick alone, and how much slower alone the first is
groups = {}
for r in rows:
    groups.setdefault(r[9], []).append(r)
moved, worst = 0, 1.0
with open(out_csv.replace("rematch.csv", "picks.txt"), "w") as f:
    f.write("%-12s %-22s %7s %6s  %-60s %-60s %s\n" % ("op", "dtype", "M", "N", "chain pick",
            "alone pick", "chain pick alone / alone pick"))
    for g in sorted(groups.values(), key=lambda v: (v[0][0], v[0][1], v[0][3], v[0][2])):
        c = min(g, key=lambda r: r[6])
        a = min(g, key=lambda r: r[7])
        ratio = c[7] / a[7]
        moved += c is not a
        worst = max(worst, ratio)
        f.write("%-12s %-22s %7d %6d  %-60s %-60s %.3f\n" % (c[0], c[1], c[2], c[3],
                c[4].split(".")[1] + " " + c[5], a[4].split(".")[1] + " " + a[5], ratio))
    f.write("%d problems re-measured alone; the pick moved at %d; the chain's pick at most "
            "%.3fx the alone pick's time alone\n" % (len(groups), moved, worst))
shutil.copyfile(src, out_db)
con = sqlite3.connect(out_db)
con.execute("PRAGMA foreign_keys = ON")
con.execute("DELETE FROM result WHERE id NOT IN (SELECT result_id FROM rematch)")
con.commit()
con.execute("VACUUM")
con.close()
print(len(rows), "alone re-measures")
EOF
echo "rc=$?" >> "$L/reduce.log"
[ -e "$L/rematch.db" ] && xz -9 "$L/rematch.db"
stamp done
tar -cJf "$OUT/alone.tar.xz" -C "$OUT" alone && rm -rf "$L"
tar -xJOf "$OUT/alone.tar.xz" alone/times.txt alone/reduce.log; tar -xJOf "$OUT/alone.tar.xz" alone/picks.txt | tail -n 1
