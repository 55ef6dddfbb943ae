#!/usr/bin/env python3
"""gaps.py -- the library's % of its yardstick at untuned N against the
tuned neighbours of the same run, from the bench CSVs of bench/ (each pass
a `build/gpu/bench --shapes bench_shapes.txt --csv` run): the header
before (format 3, old*.csv) and after (format 4, new*.csv) the lookup's
row-line rule, alternated in one session.

    python3 data/lines-h200/gaps.py > data/lines-h200/gaps.txt
    python3 data/lines-h200/gaps.py m > data/lines-h200/gaps_m.txt

The argument is the prefix of the CSVs' names: none for old*.csv and
new*.csv (bench_shapes.txt), m for mold*.csv and mnew*.csv
(bench_shapes2.txt: N = 16 and 32 mod 64).  Also writes gap.csv
(gap_m.csv) beside it (one row per shape and op, the points below
the better tuned neighbour, for `normtune plot --csv gap.csv --x shape`).
A gap is the untuned N's % minus the better of its two tuned neighbours'
(the tuned hidden sizes on either side), at the same M, each the mean of
the passes."""
import collections
import csv
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
pre = sys.argv[1] if len(sys.argv) > 1 else ""
TUNED = {1024, 1536, 2048, 2560, 2880, 3072, 3584, 4096, 5120, 6144, 7168, 8192,
         11008, 12288, 14336, 16384}
pct = collections.defaultdict(list)
for kind in ("old", "new"):
    for p in (1, 2):
        with open(os.path.join(here, "bench", "%s%s%d.csv" % (pre, kind, p))) as f:
            for r in csv.DictReader(f):
                if r["pct"] != "-":
                    pct[(kind, r["op"], r["contender"], int(r["M"]), int(r["N"]))].append(
                        float(r["pct"]))


def mean(k):
    v = pct[k]
    return sum(v) / len(v)


cols = (("rmsnorm_bwd", "dx+dw", "bwd"), ("rmsnorm_fwd", "y", "fwd_y"),
        ("rmsnorm_fwd", "y+rstd", "fwd_y_rstd"))
rows = {}
print("# points of the op's yardstick below the better tuned neighbour (mean of 2 passes)")
print("# %-14s %-10s %7s %7s %7s %7s" % ("M x N", "op", "before", "gap", "after", "gap"))
for op, con, short in cols:
    summary = {}
    for M in sorted(set(k[3] for k in pct)):
        for N in sorted(set(k[4] for k in pct if k[3] == M)):
            if N in TUNED:
                continue
            lo = max(t for t in TUNED if t < N)
            hi = min(t for t in TUNED if t > N)
            line = "  %-14s %-10s" % ("%d x %d" % (M, N), short)
            for kind in ("old", "new"):
                nb = max(mean((kind, op, con, M, lo)), mean((kind, op, con, M, hi)))
                g = mean((kind, op, con, M, N)) - nb
                summary.setdefault(kind, []).append(g)
                rows.setdefault("%dx%d" % (M, N), {})["%s_%s" % (short, kind)] = g
                line += " %6.1f%% %+6.1f" % (mean((kind, op, con, M, N)), g)
            print(line)
    for kind, name in (("old", "before"), ("new", "after")):
        s = sorted(summary[kind])
        print("# %s %s: worst %+.1f, median %+.1f, within 3 points %d of %d, within 2 %d"
              % (short, name, s[0], s[len(s) // 2], sum(g >= -3 for g in s), len(s),
                 sum(g >= -2 for g in s)))
names = ["%s_%s" % (c[2], k) for c in cols for k in ("old", "new")]
with open(os.path.join(here, "gap%s.csv" % ("_" + pre if pre else "")), "w") as f:
    f.write("shape," + ",".join(names) + "\n")
    for shape, v in rows.items():
        f.write(shape + "," + ",".join("%.2f" % v[n] for n in names) + "\n")
