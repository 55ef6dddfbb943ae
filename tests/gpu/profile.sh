#!/bin/sh
# profile.sh -- an Nsight Compute profile of one variant at one shape, the
# evidence a goal that is not met asks for (what limits the kernel there):
#
#   sh tests/gpu/profile.sh OP FAMILY PARAMS M N [DTYPES] > report.txt
#
#   OP       rmsnorm_bwd or rmsnorm_fwd
#   FAMILY   the family's short name (persistent, rows, ...)
#   PARAMS   as `normtune list` prints them: block=256,chunks=3,stages=2,k=2
#   DTYPES   a dtype name (bf16, the default) or Lua fields: x = "bf16", w = "f32"
#
# It writes a sweep script of that one variant (a few timed samples: the
# profile is of one launch), checks with `normtune list` that the script
# keeps the variant, then runs `normtune run` on it under ncu, into a
# scratch database: one launch of the op's kernels (NCU_KERNEL, a regex
# over kernel names: the families' kernels, not the yardsticks or the dw
# column sums) after NCU_SKIP of them (4: past the correctness checks and
# the warm-up), or NCU_COUNT launches in a row (a chain's kernels: 2 with
# NCU_KERNEL='^nt_(bwd_|persist|colsum)' for a backward and its dw column
# sum: persistent's and held's kernels are nt_persist*, the others
# nt_bwd_*), with the sections that say where a memory-bound kernel's
# time goes (NCU_SECTIONS).  NORMTUNE and NCU name the binaries (default
# build/normtune, and ncu on the PATH or under /usr/local/cuda/bin).
# The report goes to stdout; the exit code is ncu's (2 for bad arguments).
set -u
if [ $# -lt 5 ] || [ $# -gt 6 ]; then
    echo "usage: sh tests/gpu/profile.sh OP FAMILY PARAMS M N [DTYPES]" >&2
    exit 2
fi
op=$1 fam=$2 params=$3 M=$4 N=$5 dt=${6:-bf16}
case "$op" in rmsnorm_bwd|rmsnorm_fwd) ;; *) echo "profile.sh: unknown op '$op'" >&2; exit 2 ;; esac
case "$M$N" in *[!0-9]*|'') echo "profile.sh: M and N must be positive integers" >&2; exit 2 ;; esac
case "$params" in *[!a-z0-9=,_]*|'') echo "profile.sh: PARAMS must look like block=256,chunks=3" >&2; exit 2 ;; esac
case "$fam" in *[!a-z0-9_]*|'') echo "profile.sh: FAMILY must be a family's short name" >&2; exit 2 ;; esac
nt=${NORMTUNE:-build/normtune}
ncu=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
skip=${NCU_SKIP:-4}
count=${NCU_COUNT:-1}
case "$skip$count" in *[!0-9]*) echo "profile.sh: NCU_SKIP and NCU_COUNT must be whole numbers" >&2; exit 2 ;; esac
[ "$count" -ge 1 ] || { echo "profile.sh: NCU_COUNT must be 1 or more" >&2; exit 2; }
kernel=${NCU_KERNEL:-'^nt_(bwd_|fwd_|persist|naive_row)'}
sections=${NCU_SECTIONS:-SpeedOfLight MemoryWorkloadAnalysis MemoryWorkloadAnalysis_Tables Occupancy LaunchStats SchedulerStats WarpStateStats}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nt_profile.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
case "$dt" in *=*) dtl="{$dt}" ;; *) dtl="\"$dt\"" ;; esac
# params a=1,b=2 -> a = {1}, b = {2}
lp=$(echo "$params" | sed 's/=\([^,]*\)/ = {\1}/g; s/,/, /g')
cat >"$tmp/one.lua" <<EOF
return normtune.sweep {
  op = "$op",
  dtype = $dtl,
  shapes = {{M = $M, N = $N}},
  families = {$fam = {params = {$lp}}},
  search = {strategy = "exhaustive"},
  timing = {warmup = 2, min_samples = 5, max_samples = 10, rel_ci = 0.5},
}
EOF
n=$("$nt" list "$tmp/one.lua" 2>"$tmp/err" | grep -c "$op\.$fam") || true
if [ "$n" != 1 ]; then
    echo "profile.sh: the script keeps $n variants of $op.$fam, not 1:" >&2
    cat "$tmp/err" >&2
    exit 2
fi
set --
for s in $sections; do set -- "$@" --section "$s"; done
echo "# $op.$fam $params at M=$M N=$N ($dt): ncu, kernels /$kernel/, launches $((skip + 1)) to $((skip + count))"
"$ncu" --kernel-name "regex:$kernel" --launch-skip "$skip" --launch-count "$count" "$@" \
    "$nt" run "$tmp/one.lua" --db "$tmp/one.db" --settle 0
