#!/bin/sh
# test_profile_script.sh -- tests/gpu/profile.sh (one variant under Nsight
# Compute) without a GPU: a stand-in ncu on the PATH prints its arguments
# and the sweep script it is handed.  The script keeps exactly the variant
# asked for, in the dtypes asked for, one launch after NCU_SKIP (or
# NCU_COUNT in a row) is profiled with the sections named, and bad arguments, or a variant the
# family refuses at the shape, exit 2 with a message before ncu runs.
# Needs NORMTUNE and NT_TMP; prints PASS/FAIL lines and "RESULT passed failed".
NAME=test_profile_script
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/bin"
cat >"$T/bin/ncu" <<'EOS'
#!/bin/sh
echo "ncu $*"
for a; do case "$a" in *.lua) cat "$a" ;; esac; done
for a; do case "$a" in *.lua) "$NORMTUNE" list "$a" ;; esac; done
EOS
chmod +x "$T/bin/ncu"
prof() { PATH="$T/bin:$PATH" sh "$root/tests/gpu/profile.sh" "$@" >"$T/out" 2>"$T/err"; rc=$?; }

prof rmsnorm_bwd persistent block=256,chunks=3,stages=2,k=2 4096 4104
[ $rc = 0 ] && ok runs || bad runs "exit $rc: $(cat "$T/err")"
has one_launch_after_skip "$T/out" "--launch-skip 4 --launch-count 1"
has sections "$T/out" "--section SpeedOfLight --section MemoryWorkloadAnalysis"
has family_kernels "$T/out" "--kernel-name regex:^nt_(bwd_|fwd_|persist|naive_row)"
n=$(grep -c '^M=4096 N=4104 x=bf16,w=bf16,dw=f32 *rmsnorm_bwd.persistent *block=256,chunks=3,stages=2,k=2' "$T/out")
[ "$n" = 1 ] && ok the_one_variant || bad the_one_variant "$(grep M=4096 "$T/out")"

NCU_SKIP=9 prof rmsnorm_fwd rows block=128,chunks=5,rows=2,k=0 16384 4104 'x = "bf16", w = "f32"'
has skip_set "$T/out" "--launch-skip 9 --launch-count 1"
grep -q '^M=16384 N=4104 x=bf16,w=f32 *rmsnorm_fwd.rows *block=128,chunks=5,rows=2,k=0' "$T/out" &&
    ok dtypes_fields || bad dtypes_fields "$(grep M=16384 "$T/out")"
NCU_COUNT=2 NCU_KERNEL='^nt_(bwd_|persist|colsum)' prof rmsnorm_bwd persistent block=512,chunks=1,stages=3,k=1 1024 4096
has count_set "$T/out" "--kernel-name regex:^nt_(bwd_|persist|colsum) --launch-skip 4 --launch-count 2"
NCU_COUNT=0 prof rmsnorm_bwd persistent block=512,chunks=1,stages=3,k=1 1024 4096
[ $rc = 2 ] && ! grep -q '^ncu' "$T/out" && grep -q "NCU_COUNT must be 1 or more" "$T/err" && ok count_zero_refused ||
    bad count_zero_refused "exit $rc"
NCU_SKIP=x prof rmsnorm_bwd persistent block=512,chunks=1,stages=3,k=1 1024 4096
[ $rc = 2 ] && grep -q "must be whole numbers" "$T/err" && ok skip_text_refused || bad skip_text_refused "exit $rc"

# one chunk of 256 threads cannot cover 4104 columns: refused before ncu
prof rmsnorm_bwd persistent block=256,chunks=1,stages=2,k=2 4096 4104
[ $rc = 2 ] && ! grep -q '^ncu' "$T/out" && ok refused_variant || bad refused_variant "exit $rc"
has refused_says_why "$T/err" "keeps 0 variants of rmsnorm_bwd.persistent, not 1"
prof rmsnorm_mid persistent block=256 4096 4096
[ $rc = 2 ] && grep -q "unknown op 'rmsnorm_mid'" "$T/err" && ok bad_op || bad bad_op "exit $rc"
prof rmsnorm_bwd persistent 'block=256;rm' 4096 4096
[ $rc = 2 ] && ok bad_params || bad bad_params "exit $rc"
prof rmsnorm_bwd persistent block=256 4096
[ $rc = 2 ] && grep -q "^usage:" "$T/err" && ok usage || bad usage "exit $rc"
finish
