#!/bin/sh
# run.sh -- every H200 run still waiting, in one device call, in order of
# worth, each step started only when the call's time left can take its
# estimate (so a machine lent late in a session, with little device time
# left, still brings back whole steps), each step's results tarred under
# $OUT as its own script writes them:
#   1. ../colsmid-h200/call.sh: the bench at M = 256, make bench of the
#      shipped header (no peers), the fill at M = 512  -> colsmid.tar.xz
#   2. ../alone-h200/header.sh: the shipped results' closest points at
#      every default problem timed again alone after an L2 flush, and the
#      header ranked that way (the time left but a minute) -> alone.tar.xz
#   3. ../bwdring-h200/call.sh: rmsnorm_bwd.ring's GPU tests and its run
#      beside persistent and held                     -> bwdring.tar.xz
#   4. ../colsmid-h200/call_all.sh's fills (MORE_ONLY=1): ring, tma, wtma
#                                                      -> more.tar.xz
#   5. ../ncumid-h200/prof.sh: profiles at the mid shapes -> ncumid.tar.xz
#   6. ../ncumid-h200/deep.sh                           -> deep.tar.xz
# The estimates are about twice what each took on an H100.  Stops at once
# (exit 3) on a GPU that is not an H200 unless ANY_GPU=1.  steps.txt under
# $OUT says what ran, for how long, and what was left for want of time.
#   there: sh data/pending-h200/run.sh .devbuild/bin.tar.xz [SECONDS]
# SECONDS: the call's limit (default 580; give the run tool's limit_s).
set -u
[ $# -ge 1 ] && [ -r "$1" ] || { echo "usage: sh data/pending-h200/run.sh BIN.tar.xz [SECONDS]" >&2; exit 2; }
case "${2:-580}" in *[!0-9]* | "") echo "run.sh: SECONDS must be a whole number, got '$2'" >&2; exit 2 ;; esac
limit=${2:-580}
if [ "${ANY_GPU:-0}" != 1 ] && ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    echo "run.sh: not an H200 ($(nvidia-smi --query-gpu=name --format=csv,noheader)); ANY_GPU=1 runs anyway" >&2
    exit 3
fi
[ -x build/normtune ] || { mkdir -p build && tar -xJf "$1" -C build; } || exit 1
t0=$(date +%s)
log=$OUT/steps.txt
step() {   # name, estimate in seconds, command...
    name=$1 est=$2; shift 2
    left=$(( limit - ($(date +%s) - t0) ))
    if [ "$left" -lt "$est" ]; then
        echo "$name: left out ($left s left, about $est s needed)" >> "$log"
        return
    fi
    s=$(date +%s)
    ANY_GPU=1 "$@" > "$OUT/$name.out" 2>&1
    rc=$?
    echo "$name: rc=$rc, $(( $(date +%s) - s )) s" >> "$log"
    tail -n 5 "$OUT/$name.out"
    rm -f "$OUT/$name.out"
}
step colsmid 240 sh data/colsmid-h200/call.sh "$1"
[ -s "$OUT/colsmid.tar.xz" ] && rm -rf "$OUT/colsmid"
# header.sh stops its sweeps when the seconds given run out and still
# brings back what it re-measured: give it all but a minute of what is left
# (it needs results.db, as ref.db.xz beside BIN.tar.xz: header.sh says how)
ref=$(dirname "$1")/ref.db.xz
if [ -r "$ref" ]; then
    step alone 200 sh data/alone-h200/header.sh "$1" "$ref" $(( limit - ($(date +%s) - t0) - 60 ))
else
    echo "alone: left out (no $ref)" >> "$log"
fi
step bwdring 150 sh data/bwdring-h200/call.sh "$1"
step more 200 env MORE_ONLY=1 MORE_LIMIT=60 sh data/colsmid-h200/call_all.sh "$1"
step ncumid 200 sh data/ncumid-h200/prof.sh "$1"
step deep 240 sh data/ncumid-h200/deep.sh "$1"
cat "$log"
