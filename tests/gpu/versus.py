#!/usr/bin/env python3
"""versus.py -- a tuned database's picks against a reference database's best,
measured side by side on this GPU.

    python3 tests/gpu/versus.py make-script --tuned T.db --ref R.db [--space L] -o vs.lua
    normtune run vs.lua --db vs.db          (on the GPU)
    python3 tests/gpu/versus.py compare --tuned T.db --ref R.db [--space L] --vs vs.db

    (both with --newest for a T.db that `make tune` seeded from R.db)

L is what `normtune list SCRIPT` prints for the tuned scripts: the
reference then keeps only their points, so that it is the best of an
exhaustive sweep of those scripts rather than of everything R.db ever
measured (older sweeps with other parameters included).

Used to check a search strategy (say `warm`, which measures a few percent of
a sweep) against an exhaustive sweep of the same GPU model stored in R.db
(data/results.db): for every (op, dtypes, M, N) that T.db tuned, the pick of
T.db (its fastest ok result) and the best of R.db under the same kernel
sources (the fastest ok result over the GPUs of R.db of T.db's model, the
newest where a point was measured twice) are put in one sweep script, `make-script`, with
a where() that keeps exactly those two configurations per shape.  Running
it measures both in the same run, on the same inputs, with the runner's
usual method.  `compare` prints, per shape, the pick's median over the
reference best's, both from vs.db, and a last line:

    versus: S of P shapes within 2% of the reference best, worst X.XXXx

With --newest (both commands), T.db's picks are those of the GPU that ran
its newest sweep only: where `make tune` seeded T.db from R.db (its SEED),
the picks of the search this GPU ran, started from the stored results of
the model.  The script then also holds the pooled pick of each shape (the
fastest over every GPU of T.db of the model, the seed's included), and
`compare` prints that pick's line before the last:

    versus (pooled): S of P shapes within 2% of the reference best, worst X.XXXx

Plain Python 3 with the standard library's sqlite3; nothing else.
"""
import argparse
import sqlite3
import sys

# A result's median, or where warm re-measured it (schema 6, table rematch)
# the rank of its newest re-measure: the order normtune's `best` view uses.
RANK = ("coalesce((SELECT m.rank_us FROM rematch m WHERE m.result_id = r.id "
        "ORDER BY m.id DESC LIMIT 1), r.median_us)")

BEST = """
SELECT s.op, s.dtype, s.M, s.N, v.family, v.params, v.src_hash, r.median_us, r.device_id
FROM result r JOIN variant v ON v.id = r.variant_id JOIN shape s ON s.id = r.shape_id
WHERE r.status = 'ok' AND r.median_us IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM error e WHERE e.result_id = r.id
                  AND e.required IS NOT NULL AND e.value > e.required)
"""


def best_rows(db, sql):
    """Rows of sql (BEST or a variant of it) ranked as normtune ranks them."""
    has = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'rematch'").fetchone()
    if has:
        sql = sql.replace("r.median_us, r.device_id", RANK + ", r.device_id", 1)
    return db.execute(sql).fetchall()


def fastest(rows, keep=lambda row: True):
    """{(op, dtype, M, N): (family, params, median)} of the fastest kept row."""
    out = {}
    for op, dt, M, N, fam, par, _h, us, _d in rows:
        k = (op, dt, M, N)
        if keep((fam, _h, _d)) and (k not in out or us < out[k][2]):
            out[k] = (fam, par, us)
    return out


MODEL = "SELECT name, cc_major, cc_minor, sms, mem_clock_khz FROM device WHERE id = ?"
SAME_MODEL = ("SELECT id FROM device WHERE name = ? AND cc_major = ? AND cc_minor = ? "
              "AND sms = ? AND mem_clock_khz = ?")


def load_space(path):
    """The points of a `normtune list SCRIPT` output: {(M, N, dtypes, family, params)}."""
    pts = set()
    with open(path) as fh:
        for line in fh:
            w = line.split()
            if len(w) >= 4 and w[0].startswith("M=") and w[1].startswith("N="):
                pts.add((int(w[0][2:]), int(w[1][2:]), w[2], w[3], w[4] if len(w) > 4 else ""))
    if not pts:
        sys.exit(f"versus: {path}: no points (give the output of normtune list SCRIPT)")
    return pts


def picks(tuned, ref, space=None, newest=False):
    """The tuned picks, the reference bests and the reference GPUs.

    The reference pools every GPU of R.db of the tuned GPU's model (name,
    compute capability, SMs, memory clock: normtune's own rule), results
    under the kernel sources T.db ran; where a point was measured on
    several of them, its newest result counts.  With space (load_space),
    only the reference's points in it count: the best of an exhaustive
    sweep of that script, not of everything R.db ever measured.  With
    newest, the picks are those of the GPU of T.db's newest sweep, and a
    fourth value is the pooled picks (every GPU of T.db); else None."""
    tdb, rdb = sqlite3.connect(tuned), sqlite3.connect(ref)
    trows = best_rows(tdb, BEST)
    if not trows:
        sys.exit(f"versus: {tuned}: no ok results")
    pooled = None
    if newest:
        (ndev,) = tdb.execute("SELECT device_id FROM sweep ORDER BY id DESC LIMIT 1").fetchone()
        pooled = trows
        trows = [r for r in trows if r[8] == ndev]
        if not trows:
            sys.exit(f"versus: {tuned}: no ok results of the GPU of its newest sweep")
    model = tdb.execute(MODEL, (trows[0][8],)).fetchone()
    hashes = {(r[4], r[6]) for r in trows}
    devs = {d for (d,) in rdb.execute(SAME_MODEL, model)}
    newest = {}
    for r in best_rows(rdb, BEST.replace("SELECT s.op", "SELECT r.id, s.op")):
        rid, row = r[0], r[1:]
        if (row[4], row[6]) not in hashes or row[8] not in devs:
            continue
        if space is not None and (row[2], row[3], row[1], row[4], row[5]) not in space:
            continue
        k = row[:6]
        if k not in newest or rid > newest[k][0]:
            newest[k] = (rid, row)
    if not newest:
        sys.exit(f"versus: {ref}: no results of the kernel sources {tuned} ran on its GPU model")
    t = fastest(trows)
    b = fastest([row for _, row in newest.values()])
    used = sorted({row[8] for _, row in newest.values()})
    if pooled is not None:
        tdevs = {d for (d,) in tdb.execute(SAME_MODEL, model)}
        pooled = fastest(pooled, lambda f: f[2] in tdevs)
    return t, b, f"{model[0]} ({len(used)} GPUs)", pooled


def lua_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def make_script(a):
    t, b, dev, pooled = picks(a.tuned, a.ref, a.space and load_space(a.space), a.newest)
    ops = {}
    for k, pick in t.items():
        if k not in b:
            continue
        cfgs = [pick, b[k]] + ([pooled[k]] if pooled and k in pooled else [])
        ops.setdefault(k[0], {}).setdefault(k[1], []).append((k[2], k[3], cfgs))
    if len(ops) != 1 and not a.op:
        sys.exit("versus: the databases hold several ops: give --op, one script per op")
    op = a.op or next(iter(ops))
    if op not in ops:
        sys.exit(f"versus: no shape of op {op} in both databases")
    vals = {}          # family -> param -> set of values
    allow = []         # lines of the allow table
    dtypes = []
    for dt, shapes in sorted(ops[op].items()):
        slots = ", ".join(f"{kv.split('=')[0]} = {lua_str(kv.split('=')[1])}" for kv in dt.split(","))
        dtypes.append(f"    {{{slots}, shapes = {{"
                      + ", ".join(f"{{M = {M}, N = {N}}}" for M, N, _ in sorted(shapes))
                      + "}},")
        for M, N, cfgs in shapes:
            for fam, par, _ in cfgs:
                f = fam.split(".", 1)[1]
                for kv in par.split(","):
                    k, v = kv.split("=")
                    vals.setdefault(f, {}).setdefault(k, set()).add(v)
                allow.append(f"  [{lua_str(f'{dt}|{M}|{N}|{f}|{par}')}] = true,")
    fams = []
    for f, ps in sorted(vals.items()):
        plist = []
        for k, vs in ps.items():
            items = sorted(vs, key=lambda v: (0, int(v), "") if v.lstrip("-").isdigit() else (1, 0, v))
            plist.append(f"{k} = {{" + ", ".join(v if v.lstrip("-").isdigit() else lua_str(v)
                                                 for v in items) + "}")
        order = ", ".join(lua_str(k) for k in ps)
        fams.append(f"    {f} = {{params = {{{', '.join(plist)}}},\n"
                    f"      where = function(p, s) return keep(s, {lua_str(f)}, {{{order}}}, p) end}},")
    text = f"""-- generated by tests/gpu/versus.py: for each shape, {a.tuned}'s pick and
-- the best of {a.ref} ({dev}) under the same kernel sources
local allow = {{
{chr(10).join(allow)}
}}
local function dtext(s)
  local t = {{}}
  for _, k in ipairs({{"x", "w", "dw"}}) do
    if s.dtype[k] then t[#t + 1] = k .. "=" .. s.dtype[k] end
  end
  return table.concat(t, ",")
end
local function keep(s, fam, order, p)
  local t = {{}}
  for i, k in ipairs(order) do t[i] = k .. "=" .. tostring(p[k]) end
  return allow[dtext(s) .. "|" .. s.M .. "|" .. s.N .. "|" .. fam .. "|" .. table.concat(t, ",")] == true
end
return normtune.sweep {{
  op = {lua_str(op)},
  dtypes = {{
{chr(10).join(dtypes)}
  }},
  shapes = {{{{M = 1, N = 8}}}},  -- (every dtype above has its own)
  families = {{
{chr(10).join(fams)}
  }},
  search = {{strategy = "exhaustive"}},
  timing = {{warmup = 10, min_samples = 20, max_samples = 200, rel_ci = 0.01}},
  eps = 1e-6,
}}
"""
    with open(a.o, "w") as fh:
        fh.write(text)
    n = sum(len(s) for s in ops[op].values())
    print(f"versus: {a.o}: {op}, {n} shapes, reference device {dev}")


def against(t, b, meas, vs):
    """Lines per shape of picks t against the bests b, both measured in
    meas, and the summary counts (n, within, worst)."""
    n = within = 0
    worst = 1.0
    rows = []
    for k in sorted(t):
        if k not in b:
            continue
        tp = meas.get(k + t[k][:2])
        bp = meas.get(k + b[k][:2])
        if tp is None or bp is None:
            rows.append(f"{k[0]} {k[1]} M={k[2]} N={k[3]}: not measured in {vs}")
            continue
        r = tp / bp
        n += 1
        within += r <= 1.02
        worst = max(worst, r)
        rows.append(f"{k[0]:12} {k[1]:22} M={k[2]:<7} N={k[3]:<6} pick {t[k][0]} {t[k][1]} "
                    f"{tp:.2f} us, ref best {b[k][0]} {b[k][1]} {bp:.2f} us: {r:.3f}x")
    return rows, n, within, worst


def compare(a):
    t, b, _, pooled = picks(a.tuned, a.ref, a.space and load_space(a.space), a.newest)
    vs = sqlite3.connect(a.vs).execute(BEST).fetchall()
    meas = {}
    for op, dt, M, N, fam, par, _h, us, _d in vs:
        meas[(op, dt, M, N, fam, par)] = us
    rows, n, within, worst = against(t, b, meas, a.vs)
    print("\n".join(rows))
    if not n:
        sys.exit("versus: no shape measured")
    if pooled is not None:
        _, pn, pw, pworst = against(pooled, b, meas, a.vs)
        print(f"versus (pooled): {pw} of {pn} shapes within 2% of the reference best, "
              f"worst {pworst:.3f}x")
    print(f"versus: {within} of {n} shapes within 2% of the reference best, worst {worst:.3f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make-script")
    m.add_argument("--tuned", required=True)
    m.add_argument("--ref", required=True)
    m.add_argument("--op")
    m.add_argument("-o", required=True)
    c = sub.add_parser("compare")
    c.add_argument("--tuned", required=True)
    c.add_argument("--ref", required=True)
    c.add_argument("--vs", required=True)
    for p in (m, c):
        p.add_argument("--newest", action="store_true",
                       help="the picks of the GPU of T.db's newest sweep (T.db seeded from R.db)")
        p.add_argument("--space", help="the output of normtune list SCRIPT: the reference "
                                       "keeps only its points")
    a = ap.parse_args()
    make_script(a) if a.cmd == "make-script" else compare(a)


if __name__ == "__main__":
    main()
