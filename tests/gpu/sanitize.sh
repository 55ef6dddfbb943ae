#!/bin/sh
# sanitize.sh -- compute-sanitizer memcheck and racecheck over the small-shape
# GPU kernel tests, one run per tool and family (`test_kernels --small
# --check-only --no-fallback --family OP.FAMILY`: each probed config run
# once and validated), so that every family gets its own PASS or FAIL
# line; then one run per tool of the ops' fallbacks alone, checked for
# determinism and timed as a sweep times them (`timing`: the runner's own
# kernels too, the yardsticks, the gate and the L2 flush, which
# --check-only leaves out).  A run that gives no result within
# SANITIZE_TIMEOUT seconds (600) is a FAIL that says so, rather than a
# test-gpu that never ends.  Up to SANITIZE_JOBS runs (default: half the
# CPUs, at least 1) go at once on the one GPU: the sanitizers' cost is
# mostly host work.  Each line gives the run's seconds and is printed, in
# the fixed order (memcheck of every family, its timing run, then
# racecheck), as soon as the runs before it are done.  The families are
# those `normtune --help` lists (NORMTUNE, else build/normtune); where it
# cannot say, one run covers them all.  SANITIZE_FAMILIES (OP.FAMILY names,
# and `timing` for the fallbacks' run) and SANITIZE_TOOLS (memcheck,
# racecheck, synccheck, initcheck; default memcheck racecheck) narrow or
# widen that: the runs of a family just written.  Prints PASS/FAIL lines
# and RESULT.
#
# `sanitize.sh --one BIN DIR TOOL FAMILY` is one run (used by the jobs):
# its output to DIR/TOOL_FAMILY.out, its exit status and seconds to
# DIR/TOOL_FAMILY.rc.
limit=${SANITIZE_TIMEOUT:-600}
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ "$1" = --one ]; then
    bin=$2 dir=$3 tool=$4 fam=$5
    case "$fam" in
    all) set -- --check-only ;;
    timing) set -- --family none ;;     # no family is named so: the fallbacks alone
    *) set -- --check-only --no-fallback --family "$fam" ;;
    esac
    t0=$(date +%s)
    timeout "$limit" "$san" --tool "$tool" --error-exitcode 3 "$bin" --small "$@" \
        >"$dir/${tool}_$fam.out" 2>&1
    rc=$?
    echo "$rc $(( $(date +%s) - t0 ))" >"$dir/${tool}_$fam.rc.tmp"
    mv "$dir/${tool}_$fam.rc.tmp" "$dir/${tool}_$fam.rc"
    exit 0
fi
bin=${1:-build/gpu/test_kernels}
cpus=$(nproc 2>/dev/null || echo 2)
jobs=${SANITIZE_JOBS:-$(( cpus / 2 > 0 ? cpus / 2 : 1 ))}
case "$jobs" in ''|*[!0-9]*|0) echo "sanitize.sh: SANITIZE_JOBS must be a positive integer, not '$jobs'" >&2; exit 2 ;; esac
tools=${SANITIZE_TOOLS:-memcheck racecheck}
for tool in $tools; do
    case $tool in memcheck|racecheck|synccheck|initcheck) ;;
    *) echo "sanitize.sh: SANITIZE_TOOLS: '$tool' is no compute-sanitizer tool (memcheck, racecheck, synccheck, initcheck)" >&2; exit 2 ;;
    esac
done
[ -n "$tools" ] || { echo "sanitize.sh: SANITIZE_TOOLS names no tool" >&2; exit 2; }
fams=$("${NORMTUNE:-build/normtune}" --help 2>/dev/null | awk '
    /^ops / { on = 1; next }
    on && /^  [a-z]/ { op = $1; next }
    on && /^   / { sub(/;.*/, ""); gsub(/,/, ""); for (i = 1; i <= NF; i++) print op "." $i }')
if [ -n "${SANITIZE_FAMILIES:-}" ]; then
    for fam in $SANITIZE_FAMILIES; do
        [ "$fam" = timing ] || [ -z "$fams" ] && continue
        printf '%s\n' $fams | grep -qx "$fam" ||
            { echo "sanitize.sh: SANITIZE_FAMILIES: '$fam' is no family normtune --help lists" >&2; exit 2; }
    done
    fams=$SANITIZE_FAMILIES
elif [ -n "$fams" ]; then fams="$fams timing"; else fams=all; fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/sanitize.XXXXXX") || exit 2
runs=
trap 'rm -rf "$dir"' EXIT
# interrupted (Ctrl-C, a timeout): no more runs start, the scratch folder
# goes; a run under way ends within its own SANITIZE_TIMEOUT
trap '[ -n "$runs" ] && kill "$runs" 2>/dev/null; exit 130' INT
trap '[ -n "$runs" ] && kill "$runs" 2>/dev/null; exit 143' TERM HUP
for tool in $tools; do
    for fam in $fams; do printf '%s %s\n' "$tool" "$fam"; done
done | xargs -P "$jobs" -n 2 sh "$0" --one "$bin" "$dir" &
runs=$!
p=0; f=0
for tool in $tools; do
    for fam in $fams; do
        if [ "$fam" = all ]; then name=$tool; else name=${tool}_$fam; fi
        out=$dir/${tool}_$fam.out
        # its result, or none when the runs are over without it (a run killed)
        while [ ! -e "$dir/${tool}_$fam.rc" ] && kill -0 "$runs" 2>/dev/null; do sleep 1; done
        rc=none secs=-
        [ -e "$dir/${tool}_$fam.rc" ] && read -r rc secs <"$dir/${tool}_$fam.rc"
        summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY" "$out" 2>/dev/null | tail -1)
        if [ "$rc" = 0 ] && grep -q "^RESULT [0-9]* 0$" "$out"; then
            echo "PASS sanitize_$name: $summary ($secs s)"; p=$((p + 1))
        elif [ "$rc" = 124 ]; then
            tail -10 "$out"
            echo "FAIL sanitize_$name: no result within $limit s (hung, or too slow under $tool)"
            f=$((f + 1))
        else
            tail -30 "$out" 2>/dev/null
            echo "FAIL sanitize_$name (exit $rc): $summary ($secs s)"; f=$((f + 1))
        fi
    done
done
wait
echo "RESULT $p $f"
