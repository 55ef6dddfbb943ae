#!/bin/sh
# bench_checks.sh -- `make bench` as far as it goes without a GPU, run by
# tests/test_lib_build.sh against the library it has just built (so that
# make test compiles the library once): the bench program
# (tests/gpu/bench.c with the add kernel tests/gpu/bench_add.cu) builds
# against that library; its shape list (tests/gpu/bench_shapes.txt) parses,
# and the peers scripts' reader (tests/gpu/peers_common.py) reads the same
# shapes and refuses the same bad lines; a bad shape file or argument is
# refused (exit 2) naming what is wrong; with no GPU visible the bench says
# so and exits 1, leaving no CSV behind, and tests/gpu/bench_run.sh (what
# make bench runs) stops there saying so; given a bench's CSV, bench_run.sh
# draws it with `normtune plot --csv` and notes that the peers scripts were
# skipped.  No GPU is used, on any machine: the no-GPU checks hide the GPUs
# (CUDA_VISIBLE_DEVICES empty), and a made-up CSV stands for a bench run.
#
# Needs NT_BENCH_B (the scratch build folder holding the library) and
# NT_BENCH_D (the header it was built from), NORMTUNE, NT_TMP, nvcc,
# gnuplot; prints PASS/FAIL lines and "RESULT passed failed".
NAME=bench_checks
. "$(dirname "$0")/lib.sh"
NORMTUNE=${NORMTUNE:-$root/build/normtune}
B=${NT_BENCH_B:?the scratch build folder of test_lib_build.sh}
D=${NT_BENCH_D:?the header that library was built from}
BENCH=$B/gpu/bench
SHAPES=$root/tests/gpu/bench_shapes.txt

# ---- the bench builds against the library of B (only its own files compile)
if make -C "$root" "$BENCH" B="$B" DISPATCH="$D" >"$T/make.out" 2>&1 && [ -x "$BENCH" ]; then
    ok bench_builds
else
    bad bench_builds "$(tail -5 "$T/make.out")"
fi
grep -q 'NVCC.*normtune.o\|normtune\.cu' "$T/make.out" && bad bench_reuses_library "nvcc rebuilt the library" \
    || ok bench_reuses_library

# ---- the shape list: every non-comment line of the file, in order
sed 's/#.*//' "$SHAPES" | awk 'NF { print $1, $2 }' >"$T/want.shapes"
"$BENCH" --list-shapes >"$T/list.out" 2>"$T/list.err"; rc=$?
n=$(wc -l <"$T/want.shapes")
if [ "$rc" = 0 ] && [ "$n" -ge 12 ] && cmp -s "$T/want.shapes" "$T/list.out"; then
    ok list_shapes
else
    bad list_shapes "exit $rc, $n shapes in the file: $(diff "$T/want.shapes" "$T/list.out" | head -3 | tr '\n' ' ') $(head -c 200 "$T/list.err")"
fi
grep -qx '131072 4096' "$T/list.out" && grep -qx '16384 12296' "$T/list.out" \
    && ok list_has_issue_shapes || bad list_has_issue_shapes "$(head -3 "$T/list.out")"

# the peers scripts read the same list (peers_common.bench_shapes); they
# import torch at the top, so without it a stand-in module named torch
# (only the dtype names) lets the reader be imported
mkdir -p "$T/py"
if ! python3 -c 'import torch' >/dev/null 2>&1; then
    printf 'bfloat16, float16, float32 = "bf16", "f16", "f32"\n' >"$T/py/torch.py"
fi
if PYTHONPATH="$T/py:$root/tests/gpu" python3 -c '
import sys
from peers_common import bench_shapes
for M, N in bench_shapes(sys.argv[1]):
    print(M, N)' "$SHAPES" >"$T/py.out" 2>"$T/py.err" && cmp -s "$T/py.out" "$T/list.out"; then
    ok python_reads_same_shapes
else
    bad python_reads_same_shapes "$(head -c 300 "$T/py.err") $(diff "$T/py.out" "$T/list.out" | head -3 | tr '\n' ' ')"
fi
printf '# c\n8 64\n8 x 64\n' >"$T/bad.txt"
PYTHONPATH="$T/py:$root/tests/gpu" python3 -c '
import sys
from peers_common import bench_shapes
bench_shapes(sys.argv[1])' "$T/bad.txt" >"$T/py.out" 2>&1
grep -q 'bad.txt:3: want "M N"' "$T/py.out" && ok python_bad_line || bad python_bad_line "$(tail -2 "$T/py.out")"

# the peers scripts' passes (--repeat) and their verdict against the
# fastest peer: medians over passes, ranges, the passes won
if PYTHONPATH="$T/py:$root/tests/gpu" python3 -c '
from peers_common import time_passes, versus
seq = iter([[10.0, 9.0, 12.0, 13.0], [10.0, 11.0, 8.0, 13.0], [12.0, 9.5, 12.5, 9.4]])
passes, med, spread = time_passes(lambda: next(seq), ["add", "normtune", "QuACK", "Liger"], 3)
assert med == {"add": 10.0, "normtune": 9.5, "QuACK": 12.0, "Liger": 13.0}, med
assert spread["normtune"] == (9.0, 11.0) and spread["add"] == (10.0, 12.0), spread
r = versus(passes, "normtune", ["QuACK", "Liger"])
assert r[1] == "QuACK" and abs(r[0] - 12.0 / 9.5) < 1e-12, r
assert r[2:] == (1, 3), r      # lost pass 2 to QuACK (8) and pass 3 to Liger (9.4)
assert versus(passes, "normtune", "QuACK")[2:] == (2, 3)
assert versus([{"normtune": 1.0}], "normtune", ["QuACK"]) is None
assert versus([{"QuACK": 1.0}], "normtune", ["QuACK"]) is None
_, m1, s1 = time_passes(lambda: [1.0, 2.0], ["a", "b"], 1)
assert m1 == {"a": 1.0, "b": 2.0} and s1 == {}
print("ok")' >"$T/py.out" 2>&1 && grep -qx ok "$T/py.out"; then
    ok python_passes_versus
else
    bad python_passes_versus "$(tail -c 300 "$T/py.out")"
fi
PYTHONPATH="$T/py:$root/tests/gpu" python3 -c '
from peers_common import parser, check_repeat
ap = parser("x")
check_repeat(ap, ap.parse_args(["--repeat", "0"]))' >"$T/py.out" 2>&1; rc=$?
[ "$rc" = 2 ] && grep -q -- '--repeat must be between 1 and 100, not 0' "$T/py.out" \
    && ok python_bad_repeat || bad python_bad_repeat "exit $rc: $(tail -c 300 "$T/py.out")"

# ---- bad input: exit 2 and what is wrong
"$BENCH" --list-shapes --shapes "$T/bad.txt" >"$T/out" 2>"$T/err"; rc=$?
[ "$rc" = 2 ] && grep -q 'bad.txt:3: want "M N"' "$T/err" && ok bad_shape_line \
    || bad bad_shape_line "exit $rc: $(head -c 300 "$T/err")"
for content in '# only a comment' '8 0' '8 64 2' '-8 64' '+8 64' '8 6.4' '99999999999999999999 8'; do
    printf '%s\n' "$content" >"$T/bad2.txt"
    "$BENCH" --list-shapes --shapes "$T/bad2.txt" >"$T/out" 2>"$T/err"; rc=$?
    [ "$rc" = 2 ] && grep -q 'bad2.txt' "$T/err" && ok "bad_shapes '$content'" \
        || bad "bad_shapes '$content'" "exit $rc: $(head -c 300 "$T/err")"
    PYTHONPATH="$T/py:$root/tests/gpu" python3 -c '
import sys
from peers_common import bench_shapes
try:
    bench_shapes(sys.argv[1])
except ValueError as e:
    sys.exit(str(e))' "$T/bad2.txt" >"$T/out" 2>&1 && rc=0 || rc=1
    [ "$rc" = 1 ] && grep -q 'bad2.txt' "$T/out" && ok "python_bad_shapes '$content'" \
        || bad "python_bad_shapes '$content'" "accepted, or: $(head -c 300 "$T/out")"
done
"$BENCH" --list-shapes --shapes "$T/none.txt" >"$T/out" 2>"$T/err"; rc=$?
[ "$rc" = 2 ] && grep -q 'cannot read the shape file' "$T/err" && ok missing_shape_file \
    || bad missing_shape_file "exit $rc: $(head -c 300 "$T/err")"
for args in '--iters 0' '--iters x' '--warmup -1' '--flush-mb' '--frobnicate'; do
    # shellcheck disable=SC2086  # args: several words
    "$BENCH" $args >"$T/out" 2>"$T/err"; rc=$?
    [ "$rc" = 2 ] && grep -q 'usage: bench' "$T/err" && ok "bad_args '$args'" \
        || bad "bad_args '$args'" "exit $rc: $(head -c 300 "$T/err")"
done
"$BENCH" --help >"$T/out" 2>&1 && grep -q -- '--list-shapes' "$T/out" && ok help || bad help

# ---- no GPU: a plain message, exit 1, nothing left half-written
CUDA_VISIBLE_DEVICES= "$BENCH" --csv "$T/b.csv" --plot-csv "$T/p.csv" >"$T/out" 2>"$T/err"; rc=$?
[ "$rc" = 1 ] && grep -q 'no CUDA device here' "$T/err" && grep -q 'needs an NVIDIA GPU' "$T/err" \
    && ok no_gpu_message || bad no_gpu_message "exit $rc: $(head -c 300 "$T/err") $(head -c 200 "$T/out")"
[ ! -e "$T/b.csv" ] && [ ! -e "$T/p.csv" ] && ok no_gpu_no_csv || bad no_gpu_no_csv
CUDA_VISIBLE_DEVICES= BENCH=$BENCH NORMTUNE=$NORMTUNE BENCH_OUT=$T/out1 PYTHON=false \
    sh "$root/tests/gpu/bench_run.sh" >"$T/run1.out" 2>&1; rc=$?
[ "$rc" != 0 ] && grep -q 'no GPU here' "$T/run1.out" && ok make_bench_no_gpu \
    || bad make_bench_no_gpu "exit $rc: $(tail -3 "$T/run1.out")"

# ---- a bench's CSV drawn: a stand-in bench writes what bench.c writes
# (bench_pct.csv: shape, then % per op and output set; '-' for a refused
# shape) and bench_run.sh plots it; no torch for PYTHON=false: a note
cat >"$T/fake_bench" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do
    case \$1 in
    --csv) printf 'op,M,N,contender,us,yardstick,us_yardstick,pct\nrmsnorm_fwd,1024,4096,y,5.800,copy,5.600,96.55\n' >"\$2" ;;
    --plot-csv) printf 'shape,rmsnorm_fwd y,rmsnorm_fwd y+rstd,rmsnorm_bwd dx+dw\n1024x4096,96.55,95.10,88.20\n4096x4096,98.10,97.00,91.40\n16384x32768,-,-,-\n' >"\$2" ;;
    esac
    shift
done
echo "fake bench"
EOF
chmod +x "$T/fake_bench"
BENCH=$T/fake_bench NORMTUNE=$NORMTUNE BENCH_OUT=$T/out2 PYTHON=false \
    sh "$root/tests/gpu/bench_run.sh" >"$T/run2.out" 2>&1; rc=$?
[ "$rc" = 0 ] && ok bench_run_exit_0 || bad bench_run_exit_0 "exit $rc: $(tail -5 "$T/run2.out")"
if head -c 200 "$T/out2/bench.svg" 2>/dev/null | grep -q '^<?xml\|^<svg' \
    && grep -q 'rmsnorm_bwd dx+dw' "$T/out2/bench.svg"; then
    ok plot_drawn
else
    bad plot_drawn "$(grep -i 'plot\|error' "$T/run2.out" | head -3)"
fi
grep -q 'fake bench' "$T/out2/bench.txt" && ok bench_log_kept || bad bench_log_kept
grep -q 'cannot import torch, so the peers scripts' "$T/run2.out" && ok peers_skipped_note \
    || bad peers_skipped_note "$(tail -3 "$T/run2.out")"
finish
