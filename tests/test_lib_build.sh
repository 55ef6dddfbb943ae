#!/bin/sh
# test_lib_build.sh -- the production library builds without a GPU (CI):
# `make lib` gives build/libnormtune.{a,so} exporting only normtune_*, with
# exactly the header's kernels instantiated and nothing left unresolved; a
# small program links against each library and gets argument errors before
# any CUDA call; a header stale for a family is refused naming that family
# (and only it) before nvcc runs, with the built libraries left alone;
# `make install` lays out the header (normtune.h with the ops' calls,
# normtune_ops.h), libraries and normtune.pc; the example
# builds against the install with pkg-config, and against the build tree
# with `make examples`; make bench's program builds against the same
# library and does what it can without a GPU (tests/bench_checks.sh).
#
# The libraries are built into a scratch build directory (make's B), so
# the build/ of the checkout -- the tuner, and a library the user built
# from the shipped header -- is left as it was: a test that rebuilt
# build/libnormtune.so from the fixture header would hand the next user of
# it a library tuned for nothing (the_checkout_build_is_left_alone).
#
# The header is exported here from the drift test's fixture database
# (build/tests/test_dispatch --make-db: every op, dtype combination and
# family, under the families' current source hashes), so this tests the
# build, not the tuning; the drift test proves the library instantiates the
# very name expressions the tuner compiles.
#
# Runs make from the repository root (found from this script).  A cold
# `make lib` (nvcc for sm_80, sm_90a, sm_100a) takes about 15 s on 2 cores.
# Needs NT_TMP (a scratch dir); prints PASS/FAIL lines and "RESULT p f".
root=$(cd "$(dirname "$0")/.." && pwd)
T=${NT_TMP:-/tmp}/test_lib_build.$$
mkdir -p "$T"
passed=0; failed=0
ok() { passed=$((passed + 1)); echo "PASS $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1${2:+: $2}"; }
RB=$root/build           # the checkout's build: the tuner and the drift test
B=$T/build               # the libraries built here
nvcc=$(command -v nvcc 2>/dev/null)
CUDA=${CUDA:-${nvcc%/bin/nvcc}}
[ -n "$CUDA" ] || CUDA=/usr/local/cuda
NORMTUNE=${NORMTUNE:-$RB/normtune}
# the drift test of the same build as NORMTUNE (make test builds both before
# it runs this; make test-asan builds them into build-asan/)
TD=$(dirname "$NORMTUNE")/tests/test_dispatch
# what the checkout's build holds of the library now, to compare at the end
for f in libnormtune.a libnormtune.so lib/nt_dispatch.h; do
    if [ -f "$RB/$f" ]; then cksum <"$RB/$f"; else echo none; fi
done >"$T/rb.before"

# A header for the current sources, exported from the fixture database.
D=$T/dispatch.h
if "$TD" --make-db "$T/fixture.db" >"$T/db.out" 2>&1 \
    && "$NORMTUNE" export --db "$T/fixture.db" -o "$D" >"$T/export.out" 2>&1; then
    ok export_header
else
    bad export_header "$TD or $NORMTUNE: $(cat "$T/db.out" "$T/export.out" 2>&1 | tail -3)"
fi

t0=$(date +%s)
if make -C "$root" lib B="$B" DISPATCH="$D" >"$T/lib.out" 2>&1; then
    ok make_lib; echo "note: make lib: $(( $(date +%s) - t0 )) s"
else
    bad make_lib "$(tail -5 "$T/lib.out")"
fi
[ -f "$B/libnormtune.a" ] && [ -f "$B/libnormtune.so" ] && ok libs_exist || bad libs_exist

# the public header the build put together: normtune.h and the ops' calls
# (normtune_ops.h, from every registered op's kernels/<op>/api.h)
[ -f "$B/include/normtune.h" ] && [ -f "$B/include/normtune_ops.h" ] \
    && grep -q 'NORMTUNE_API normtune_status normtune_rmsnorm_bwd(' "$B/include/normtune_ops.h" \
    && ok public_header_built || bad public_header_built "no $B/include/normtune.h, normtune_ops.h"
# exported symbols: every function the public header declares, and
# nothing that does not start normtune_
api=$(cat "$B/include/normtune.h" "$B/include/normtune_ops.h" 2>/dev/null \
    | tr '\n' ' ' | grep -o 'NORMTUNE_API [^(;]*(' | sed 's/.*[ *]\([A-Za-z_0-9]*\)($/\1/' | grep '^normtune_' | sort -u)
case " $(echo $api) " in *" normtune_rmsnorm_fwd_choice "*" normtune_version "*) ok api_from_header ;;
    *) bad api_from_header "declared: $(echo $api)" ;; esac
nm -g --defined-only "$B/libnormtune.a" 2>/dev/null | awk 'NF == 3 {print $3}' | sort >"$T/a.syms"
nm -D --defined-only "$B/libnormtune.so" 2>/dev/null | awk 'NF == 3 {print $3}' | sort >"$T/so.syms"
for lib in a so; do
    other=$(grep -v '^normtune_' "$T/$lib.syms" | head -5 | tr '\n' ' ')
    [ -s "$T/$lib.syms" ] && [ -z "$other" ] && ok "only_normtune_symbols_$lib" \
        || bad "only_normtune_symbols_$lib" "also exports: $other"
    missing=""
    for s in $api; do grep -qx "$s" "$T/$lib.syms" || missing="$missing $s"; done
    [ -z "$missing" ] && ok "api_exported_$lib" || bad "api_exported_$lib" "missing:$missing"
done
und=$(nm -u "$B/libnormtune.so" | awk '{print $2}' | grep -E '^(nt_|store_|ntlua_|cmd_|lua|sqlite)' | head -5 | tr '\n' ' ')
[ -z "$und" ] && ok so_no_project_undefined || bad so_no_project_undefined "$und"

# exactly the header's kernels are instantiated: every name of its kernel
# list is a __global__ function of normtune.o, and there are no others
hdr=$B/lib/nt_dispatch.h
sed -n '/^NORMTUNE_PRIV_STATIC const char \*const normtune_kernel_names/,/^};/p' "$hdr" \
    | sed -n 's/^    "\(.*\)",$/\1/p' | sort >"$T/want.k"
nm -C "$B/lib/normtune.o" | sed -n 's/^[0-9a-f]* [tT] void \(.*\)(nt_args)$/\1/p' | sort -u >"$T/have.k"
nk=$(wc -l <"$T/want.k")
if [ "$nk" -gt 0 ] && cmp -s "$T/want.k" "$T/have.k"; then
    ok kernels_instantiated; echo "note: $nk kernels, as the header lists them"
else
    bad kernels_instantiated "header $nk, library $(wc -l <"$T/have.k"): $(diff "$T/want.k" "$T/have.k" | head -4 | tr '\n' ' ')"
fi

# a C program linked against each library: argument errors need no GPU
cat >"$T/p.c" <<'EOF2'
#include <stdio.h>
#include <string.h>
#include "normtune.h"
int main(void) {
    size_t n = 0;
    static char buf[64] __attribute__((aligned(16)));
    int a = normtune_rmsnorm_bwd(NULL, buf, buf, buf, buf, 4, 64, 1e-6f, NORMTUNE_BF16,
                                 NORMTUNE_BF16, NORMTUNE_F32, buf, 64, 0);
    int b = normtune_rmsnorm_bwd(buf, buf, buf, buf, buf, 4, 60, 1e-6f, NORMTUNE_BF16,
                                 NORMTUNE_BF16, NORMTUNE_F32, buf, 64, 0);
    int c = normtune_rmsnorm_bwd(buf, buf, buf, buf, buf + 2, 4, 64, 1e-6f, NORMTUNE_BF16,
                                 NORMTUNE_BF16, NORMTUNE_F32, buf, 64, 0);
    int d = normtune_rmsnorm_bwd_workspace_size(0, 64, NORMTUNE_BF16, NORMTUNE_BF16,
                                                NORMTUNE_F32, &n);
    int e = normtune_rmsnorm_bwd_workspace_size(4, 64, NORMTUNE_BF16, NORMTUNE_BF16,
                                                (normtune_dtype)7, &n);
    printf("%d %d %d %d %d %s|%s|%s\n", a, b, c, d, e,
           normtune_strerror(NORMTUNE_ERROR_UNSUPPORTED_N),
           normtune_strerror(NORMTUNE_ERROR_UNSUPPORTED_DTYPE), normtune_version());
    return 0;
}
EOF2
fam=$(sed -n 's/^    X(0, "\([^"]*\)", "\([0-9a-f]*\)").*/\1@\2/p' "$hdr" | head -1)
for lib in a so; do
    if [ $lib = a ]; then L="$B/libnormtune.a -L$CUDA/lib64 -lcudart_static -lpthread -ldl -lrt -lm"
    else L="-L$B -lnormtune -Wl,-rpath,$B -L$CUDA/lib64 -lcudart -Wl,-rpath,$CUDA/lib64"; fi
    if cc -std=c11 -Wall -Werror -I"$B/include" -o "$T/p_$lib" "$T/p.c" $L -Wl,--no-undefined \
        >"$T/p_$lib.out" 2>&1; then
        ok "link_$lib"
        out=$("$T/p_$lib" 2>&1)
        case "$out" in
            "1 3 4 2 7 N must be a multiple of 8"*"|this dtype combination"*"$fam"*) ok "run_$lib" ;;
            *) bad "run_$lib" "$out (want a family as $fam)" ;;
        esac
    else
        bad "link_$lib" "$(head -5 "$T/p_$lib.out")"
    fi
done

# a header stale for one family is refused naming that family and not the
# others, before nvcc, and nothing is clobbered
f1=$(sed -n 's/^    X(\([0-9]*\), "\([^"]*\)", "[0-9a-f]*").*/\2/p' "$hdr" | head -1)
nfam=$(sed -n 's/^    X(\([0-9]*\), "\([^"]*\)", "[0-9a-f]*").*/\2/p' "$hdr" | wc -l)
sed "s/^\(    X([0-9]*, \"$f1\", \"\)[0-9a-f]*\")/\10123456789abcdef\")/" "$hdr" >"$T/stale.h"
cmp -s "$hdr" "$T/stale.h" && bad stale_made "could not make a stale header"
cp "$B/libnormtune.a" "$T/keep.a"; cp "$B/libnormtune.so" "$T/keep.so"; cp "$hdr" "$T/keep.h"
sleep 1
if make -C "$root" lib B="$B" DISPATCH="$T/stale.h" >"$T/stale.out" 2>&1; then
    bad stale_refused "make lib accepted a header with another source hash"
else
    ok stale_refused
fi
n1=$(grep -c "stale for family $f1:" "$T/stale.out")
nall=$(grep -c "stale for family" "$T/stale.out")
[ "$n1" = 1 ] && [ "$nall" = 1 ] && grep -q 0123456789abcdef "$T/stale.out" \
    && ok stale_names_the_family || bad stale_names_the_family "$(grep -i error "$T/stale.out" | head -3)"
grep -qi nvcc "$T/stale.out" && bad stale_before_nvcc "nvcc ran" || ok stale_before_nvcc
cmp -s "$T/keep.a" "$B/libnormtune.a" && cmp -s "$T/keep.so" "$B/libnormtune.so" && cmp -s "$T/keep.h" "$hdr" \
    && ok stale_not_clobbered || bad stale_not_clobbered
# every family stale: one line each
sed 's/^\(    X([0-9]*, "[^"]*", "\)[0-9a-f]*")/\1fedcba9876543210")/' "$hdr" >"$T/stale2.h"
make -C "$root" lib B="$B" DISPATCH="$T/stale2.h" >"$T/stale2.out" 2>&1
[ "$(grep -c 'stale for family' "$T/stale2.out")" = "$nfam" ] && ok stale_every_family \
    || bad stale_every_family "$nfam families, $(grep -c 'stale for family' "$T/stale2.out") named"
make -C "$root" lib B="$B" DISPATCH="$T/missing.h" >"$T/missing.out" 2>&1 && bad missing_header_refused \
    || ok missing_header_refused
# a format-1 header is refused
printf '#define NORMTUNE_DISPATCH_VERSION 1\n#define NORMTUNE_SOURCE_HASH "0123456789abcdef"\n' >"$T/v1.h"
make -C "$root" lib B="$B" DISPATCH="$T/v1.h" >"$T/v1.out" 2>&1 && bad v1_refused || ok v1_refused

# install, then the example against the install with pkg-config
I=$T/inst
if make -C "$root" install B="$B" PREFIX="$I" DISPATCH="$D" >"$T/inst.out" 2>&1 && [ -f "$I/include/normtune.h" ] \
    && [ -f "$I/include/normtune_ops.h" ] \
    && [ -f "$I/lib/libnormtune.a" ] && [ -f "$I/lib/libnormtune.so" ] \
    && [ -f "$I/lib/pkgconfig/normtune.pc" ]; then
    ok install
else
    bad install "$(tail -3 "$T/inst.out")"
fi
libs=$(PKG_CONFIG_PATH="$I/lib/pkgconfig" pkg-config --libs normtune 2>&1)
case "$libs" in *-lnormtune*-lcudart*) ok pkgconfig_libs ;; *) bad pkgconfig_libs "$libs" ;; esac
if PKG_CONFIG_PATH="$I/lib/pkgconfig" make -C "$root/examples" BIN="$T/example" >"$T/ex.out" 2>&1 \
    && [ -x "$T/example" ]; then
    ok example_builds_with_pkgconfig
else
    bad example_builds_with_pkgconfig "$(tail -3 "$T/ex.out")"
fi
readelf -d "$T/example" 2>/dev/null | grep -q 'NEEDED.*libnormtune.so' && ok example_uses_installed_so \
    || bad example_uses_installed_so
make -C "$root" examples B="$B" DISPATCH="$D" >"$T/ex2.out" 2>&1 && [ -x "$B/examples/rmsnorm_bwd" ] \
    && ok example_builds_in_tree || bad example_builds_in_tree "$(tail -3 "$T/ex2.out")"

# make bench's program against this library (tests/bench_checks.sh): the
# library is compiled once per make test
NT_BENCH_B=$B NT_BENCH_D=$D NORMTUNE=$NORMTUNE sh "$root/tests/bench_checks.sh" >"$T/bench.out" 2>&1
grep -E '^(PASS|FAIL|SKIP) ' "$T/bench.out"
res=$(sed -n 's/^RESULT \([0-9]*\) \([0-9]*\)$/\1 \2/p' "$T/bench.out")
if [ -n "$res" ]; then
    passed=$((passed + ${res% *})); failed=$((failed + ${res#* }))
else
    bad bench_checks "no RESULT line: $(tail -5 "$T/bench.out")"
fi

for f in libnormtune.a libnormtune.so lib/nt_dispatch.h; do
    if [ -f "$RB/$f" ]; then cksum <"$RB/$f"; else echo none; fi
done >"$T/rb.after"
cmp -s "$T/rb.before" "$T/rb.after" && ok the_checkout_build_is_left_alone \
    || bad the_checkout_build_is_left_alone "build/libnormtune.* or build/lib/nt_dispatch.h changed"

rm -rf "$T"
echo "RESULT $passed $failed"
[ "$failed" = 0 ]
