#!/bin/sh
# bench_run.sh -- what `make bench` runs (the Makefile's bench section sets
# the variables): the library's benchmark, its figure, then the peers
# scripts, every output under BENCH_OUT.
#
#   BENCH           the bench program (build/gpu/bench)
#   NORMTUNE        the tuner (build/normtune), for `normtune plot`
#   BENCH_SHAPES    the shape file (tests/gpu/bench_shapes.txt)
#   BENCH_OUT       where the outputs go (build/bench)
#   PYTHON          the Python that runs the peers scripts (python3)
#   NT_LIB          the shared library they load (build/libnormtune.so)
#   NT_DISPATCH     the dispatch header the library was built from
#   PEERS_FWD_ARGS  extra arguments of peers_fwd.py
#   PEERS_REPEAT    passes of each shape in both peers scripts (--repeat; 5)
#   BENCH_PEERS     0: leave the peers scripts out (default 1)
#
# Written: bench.txt (the bench's output), bench.csv, bench_pct.csv,
# bench.svg; peers_fwd.txt and .md, peers_bwd.txt and .md.  No GPU: the
# bench says so and this stops with its exit status.  The bench failing
# otherwise (a call, a non-finite output), no gnuplot, or no torch for the
# Python: a message, and the rest still runs.  The exit status is the last
# failing step's (0 when none failed).
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
: "${BENCH:=build/gpu/bench}" "${NORMTUNE:=build/normtune}" "${BENCH_OUT:=build/bench}"
: "${BENCH_SHAPES:=tests/gpu/bench_shapes.txt}" "${PYTHON:=python3}"
: "${NT_LIB:=build/libnormtune.so}" "${NT_DISPATCH:=kernels/normtune_dispatch.h}"
status=0

# run NAME LOG CMD...: CMD's output on the terminal and in LOG; its exit
# status in $rc (a pipe into tee would lose it).
run() {
    _name=$1; _log=$2; shift 2
    _t0=$(date +%s)
    { "$@" 2>&1; echo $? >"$_log.rc"; } | tee "$_log"
    rc=$(cat "$_log.rc" 2>/dev/null || echo 1); rm -f "$_log.rc"
    echo "make bench: $_name: exit $rc, $(( $(date +%s) - _t0 )) s"
    [ "$rc" = 0 ] || status=$rc
}

if [ ! -x "$BENCH" ]; then
    echo "make bench: error: $BENCH not built (make bench-build, or make lib then $BENCH)"
    exit 1
fi
mkdir -p "$BENCH_OUT" || exit 1

run bench "$BENCH_OUT/bench.txt" "$BENCH" --shapes "$BENCH_SHAPES" \
    --csv "$BENCH_OUT/bench.csv" --plot-csv "$BENCH_OUT/bench_pct.csv"
if [ "$rc" != 0 ] && grep -q 'no CUDA device here' "$BENCH_OUT/bench.txt"; then
    echo "make bench: error: no GPU here; make bench measures on an NVIDIA GPU"
    exit "$rc"
elif [ "$rc" != 0 ]; then
    echo "make bench: error: the bench failed (exit $rc; its output: $BENCH_OUT/bench.txt);" \
         "going on with the rest"
fi

if ! command -v gnuplot >/dev/null 2>&1; then
    echo "make bench: note: no gnuplot here, so no $BENCH_OUT/bench.svg (draw it elsewhere:" \
         "normtune plot --csv $BENCH_OUT/bench_pct.csv --x shape -o bench.svg)"
elif [ ! -x "$NORMTUNE" ]; then
    echo "make bench: note: $NORMTUNE not built, so no $BENCH_OUT/bench.svg"
elif [ ! -s "$BENCH_OUT/bench_pct.csv" ]; then
    echo "make bench: note: the bench wrote no $BENCH_OUT/bench_pct.csv, so no plot"
elif "$NORMTUNE" plot --csv "$BENCH_OUT/bench_pct.csv" --x shape --yrange 0: \
        --ylabel '% of yardstick' --title 'normtune library: % of its yardstick (copy or add)' \
        -o "$BENCH_OUT/bench.svg"; then
    echo "make bench: drew $BENCH_OUT/bench.svg"
else
    echo "make bench: error: normtune plot failed"; status=1
fi

if [ "${BENCH_PEERS:-1}" = 0 ]; then
    echo "make bench: note: BENCH_PEERS=0, so the peers scripts were not run"
elif "$PYTHON" -c 'import torch' >/dev/null 2>&1; then
    # shellcheck disable=SC2086  # PEERS_FWD_ARGS: several words
    run peers_fwd.py "$BENCH_OUT/peers_fwd.txt" "$PYTHON" tests/gpu/peers_fwd.py --lib "$NT_LIB" \
        --header "$NT_DISPATCH" --out "$BENCH_OUT/peers_fwd.md" --repeat "${PEERS_REPEAT:-5}" \
        $PEERS_FWD_ARGS
    run peers_bwd.py "$BENCH_OUT/peers_bwd.txt" "$PYTHON" tests/gpu/peers_bwd.py --lib "$NT_LIB" \
        --header "$NT_DISPATCH" --shapes "$BENCH_SHAPES" --out "$BENCH_OUT/peers_bwd.md" \
        --repeat "${PEERS_REPEAT:-5}"
else
    echo "make bench: note: $PYTHON cannot import torch, so the peers scripts" \
         "(tests/gpu/peers_fwd.py, peers_bwd.py) were not run"
fi
echo "make bench: outputs in $BENCH_OUT: $(cd "$BENCH_OUT" && ls | tr '\n' ' ')"
exit "$status"
