#!/bin/sh
# test_versus.sh -- tests/gpu/versus.py without a GPU, on made-up databases
# of the shipped schema (data/results.db's, read from it): which configs
# make-script puts side by side, with and without --newest (a database that
# make tune seeded from the reference: the picks of the GPU of its newest
# sweep, and the pooled ones of every GPU of the model), and what compare
# prints from a made-up run of that script.
#
#   reference R: GPU 1 at shapes A and B: p1 10.0 / 20.0 us, p2 10.5 / 21.0
#   tuned T:     R, and GPU 2 (the same model, its newest sweep): p2 9.0 at
#                A, p3 21.5 at B
#   run V:       A: p1 10.0, p2 9.5; B: p1 20.0, p3 21.0
#
# --newest picks p2 at A and p3 at B (1 of 2 within 2%, worst 1.050x); the
# pooled picks are p2 at A and p1 at B (2 of 2, worst 1.000x).
NAME=test_versus
. "$(dirname "$0")/lib.sh"
V="$root/tests/gpu/versus.py"
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP versus: no python3"
    finish
    exit 0
fi

if python3 - "$root/data/results.db" "$T" <<'EOF' 2>"$T/mk.err"
import shutil, sqlite3, sys
src, t = sys.argv[1], sys.argv[2]
schema = [s for (s,) in sqlite3.connect(f"file:{src}?mode=ro", uri=True).execute(
    "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")]
FAM, H = "rmsnorm_bwd.persistent", "h1"
P = {1: "block=256,chunks=2,stages=2,k=0", 2: "block=256,chunks=2,stages=3,k=0",
     3: "block=512,chunks=1,stages=2,k=1"}
def new(path):
    db = sqlite3.connect(path)
    for s in schema:
        db.execute(s)
    for i, p in P.items():
        db.execute("INSERT INTO variant (id, family, params, src_hash) VALUES (?, ?, ?, ?)",
                   (i, FAM, p, H))
    for i, (M, N) in enumerate([(4096, 4096), (1024, 8192)], 1):
        db.execute("INSERT INTO shape (id, op, dtype, M, N) VALUES (?, 'rmsnorm_bwd', "
                   "'x=bf16,w=bf16,dw=f32', ?, ?)", (i, M, N))
    return db
def gpu(db, dev, sweep):
    db.execute("INSERT INTO device (id, name, cc_major, cc_minor, sms, l2_bytes, sm_clock_khz, "
               "mem_clock_khz, mem_bus_bits, driver, runtime, nvrtc, uuid) VALUES "
               "(?, 'NVIDIA H200', 9, 0, 132, 62914560, 1980000, 3201000, 6144, 'd', 'r', 'n', ?)",
               (dev, f"GPU-{dev}"))
    db.execute("INSERT INTO sweep (id, script, script_hash, started, device_id, status) VALUES "
               "(?, 's.lua', 'x', '2026-12-01T00:00:00Z', ?, 'done')", (sweep, dev))
def res(db, dev, sweep, shape, var, us):
    db.execute("INSERT INTO result (sweep_id, variant_id, shape_id, device_id, warmup, "
               "min_samples, max_samples, rel_ci, status, median_us, created) VALUES "
               "(?, ?, ?, ?, 10, 20, 200, 0.01, 'ok', ?, '2026-12-01T00:00:00Z')",
               (sweep, var, shape, dev, us))
r = new(f"{t}/ref.db")
gpu(r, 1, 1)
for shape, var, us in [(1, 1, 10.0), (2, 1, 20.0), (1, 2, 10.5), (2, 2, 21.0)]:
    res(r, 1, 1, shape, var, us)
r.commit()
r.close()
shutil.copy(f"{t}/ref.db", f"{t}/tuned.db")
d = sqlite3.connect(f"{t}/tuned.db")
gpu(d, 2, 2)
res(d, 2, 2, 1, 2, 9.0)
res(d, 2, 2, 2, 3, 21.5)
d.commit()
v = new(f"{t}/vs.db")
gpu(v, 3, 1)
for shape, var, us in [(1, 1, 10.0), (1, 2, 9.5), (2, 1, 20.0), (2, 3, 21.0)]:
    res(v, 3, 1, shape, var, us)
v.commit()
EOF
then ok made_databases; else bad made_databases "$(head -c 300 "$T/mk.err")"; fi

# make-script: the allow table's (shape, params) pairs, each once
allowed() { sed -n 's/^  \["x=bf16,w=bf16,dw=f32|\([0-9]*|[0-9]*\)|persistent|\([^"]*\)"\] = true,$/\1 \2/p' "$1" | sort -u | tr '\n' ';'; }
A='4096|4096'; B='1024|8192'
p1='block=256,chunks=2,stages=2,k=0'; p2='block=256,chunks=2,stages=3,k=0'; p3='block=512,chunks=1,stages=2,k=1'
if python3 "$V" make-script --newest --tuned "$T/tuned.db" --ref "$T/ref.db" -o "$T/n.lua" >"$T/out" 2>&1 &&
   [ "$(allowed "$T/n.lua")" = "$B $p1;$B $p3;$A $p1;$A $p2;" ]; then
    ok newest_script_holds_this_gpus_picks
else
    bad newest_script_holds_this_gpus_picks "$(allowed "$T/n.lua") $(head -c 300 "$T/out")"
fi
if python3 "$V" make-script --tuned "$T/tuned.db" --ref "$T/ref.db" -o "$T/p.lua" >"$T/out" 2>&1 &&
   [ "$(allowed "$T/p.lua")" = "$B $p1;$A $p1;$A $p2;" ]; then
    ok pooled_script_holds_pooled_picks
else
    bad pooled_script_holds_pooled_picks "$(allowed "$T/p.lua") $(head -c 300 "$T/out")"
fi

# compare: the newest GPU's picks on the last line, the pooled ones before it
python3 "$V" compare --newest --tuned "$T/tuned.db" --ref "$T/ref.db" --vs "$T/vs.db" >"$T/out" 2>&1
if [ "$(tail -n 1 "$T/out")" = "versus: 1 of 2 shapes within 2% of the reference best, worst 1.050x" ]; then
    ok compare_newest_last_line
else
    bad compare_newest_last_line "$(tail -c 300 "$T/out")"
fi
if [ "$(tail -n 2 "$T/out" | head -n 1)" = "versus (pooled): 2 of 2 shapes within 2% of the reference best, worst 1.000x" ]; then
    ok compare_pooled_line
else
    bad compare_pooled_line "$(tail -c 300 "$T/out")"
fi
python3 "$V" compare --tuned "$T/tuned.db" --ref "$T/ref.db" --vs "$T/vs.db" >"$T/out" 2>&1
if [ "$(tail -n 1 "$T/out")" = "versus: 2 of 2 shapes within 2% of the reference best, worst 1.000x" ] &&
   ! grep -q pooled "$T/out"; then
    ok compare_without_newest
else
    bad compare_without_newest "$(tail -c 300 "$T/out")"
fi
# a tuned database whose newest GPU measured nothing: a clear refusal
python3 - "$T/tuned.db" <<'EOF'
import sqlite3, sys
d = sqlite3.connect(sys.argv[1])
d.execute("DELETE FROM result WHERE device_id = 2")
d.commit()
EOF
if python3 "$V" make-script --newest --tuned "$T/tuned.db" --ref "$T/ref.db" -o "$T/x.lua" >"$T/out" 2>&1; then
    bad newest_without_results_refused "exit 0"
else
    has newest_without_results_refused "$T/out" "no ok results of the GPU of its newest sweep"
fi
finish
