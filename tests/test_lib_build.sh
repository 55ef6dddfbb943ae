#!/bin/sh
# test_lib_build.sh -- the production library builds without a GPU (CI):
# `make lib` gives build/libnormtune.{a,so} exporting only normtune_*, with
# exactly the header's persistent configs instantiated and nothing left
# unresolved; a small program links against each library and gets argument
# errors before any CUDA call; a stale dispatch header is refused with both
# hashes named and the built libraries left alone; `make install` lays out
# header, libraries and normtune.pc; the example builds against the install
# with pkg-config, and against the build tree with `make examples`; every
# persistent kernel gets the same registers from nvcc as from NVRTC.
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
B=$root/build
nvcc=$(command -v nvcc 2>/dev/null)
CUDA=${CUDA:-${nvcc%/bin/nvcc}}
[ -n "$CUDA" ] || CUDA=/usr/local/cuda

# The current kernel source hash ($(KSRC) as the Makefile lists it).
cur=$("$B/embed" --hash $(cd "$root" && make -s --no-print-directory -f - print-ksrc <<'EOF2'
include Makefile
print-ksrc:
	@echo $(KSRC)
EOF2
))
# The shipped configs under the current hash: this test checks the build,
# not the tuning (the shipped header is re-tuned when the kernels change).
D=$T/dispatch.h
sed "s/^#define NORMTUNE_SOURCE_HASH \".*\"\$/#define NORMTUNE_SOURCE_HASH \"$cur\"/" \
    "$root/kernels/normtune_dispatch.h" >"$D"

t0=$(date +%s)
if make -C "$root" lib DISPATCH="$D" >"$T/lib.out" 2>&1; then
    ok make_lib; echo "  make lib: $(( $(date +%s) - t0 )) s"
else
    bad make_lib "$(tail -5 "$T/lib.out")"
fi
[ -f "$B/libnormtune.a" ] && [ -f "$B/libnormtune.so" ] && ok libs_exist || bad libs_exist

# exported symbols: the normtune_* API and nothing else
api="normtune_last_cuda_error normtune_rmsnorm_bwd normtune_rmsnorm_bwd_choice normtune_rmsnorm_bwd_workspace_size normtune_strerror normtune_version"
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

# exactly the header's persistent configs are instantiated
hdr=$B/lib/nt_dispatch.h
want=$(sed -n 's/^#define NORMTUNE_RMSNORM_BWD_PERSISTENT_NCONFIGS \([0-9]*\)$/\1/p' "$hdr")
have=$(nm -C "$B/lib/normtune.o" | grep -o 'nt_persist<[0-9, ]*>' | sort -u | wc -l)
[ -n "$want" ] && [ "$have" = "$want" ] && ok persistent_instantiations \
    || bad persistent_instantiations "header lists ${want:-?}, library has $have"
naive=$(nm -C "$B/lib/normtune.o" | grep -o 'nt_naive_row<1, 1>' | sort -u | wc -l)
[ "$naive" = 1 ] && ok generic_default_instantiated || bad generic_default_instantiated

# the library runs the kernels the tuner measured: for every persistent
# config of the header, nvcc (the library, sm_90a) and NVRTC (normtune
# compile) give the kernel the same number of registers.  (Generic pointer
# arithmetic into shared memory once made them differ by up to 11.)
NORMTUNE=${NORMTUNE:-$B/normtune}
"$CUDA/bin/nvcc" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --resource-usage \
    -I"$root" -I"$root/kernels" -I"$B/lib" -I"$CUDA/include" -DNT_KERNEL_HASH="\"$cur\"" \
    -c -o "$T/ru.o" "$root/kernels/normtune.cu" >"$T/ru.txt" 2>&1
awk '/Compiling entry function .*nt_persist/ { match($0, /nt_persistI[^v]*/); k = substr($0, RSTART, RLENGTH);
       gsub(/nt_persistI|E+$/, "", k); gsub(/ELi/, ",", k); gsub(/Li/, "", k) }
     /Used [0-9]+ registers/ && k != "" { print k, $5; k = "" }' "$T/ru.txt" | sort -u >"$T/nvcc.regs"
# one variant per tuned shape that uses a persistent config, NVRTC-compiled
{
    awk '/^static const normtune_config normtune_configs/ {c = 1; next} c && /^};/ {c = 0}
         c && /PERSISTENT/ { match($0, /[0-9]+: block=[^ ]*/); split(substr($0, RSTART, RLENGTH), a, ": ");
                             p[a[1]] = a[2] }
         /^    \{[0-9]+LL, [0-9]+LL, [0-9]+,/ { gsub(/[{}LL,]/, " "); if (($3) in p) {
             w = w sprintf("  [\"%s %s %s\"] = true,\n", $1, $2, p[$3]);
             sh = sh sprintf("  {N = %s, M = %s},\n", $1, $2) } }
         END { printf "local want = {\n%s}\nlocal shapes = {\n%s}\n", w, sh }' "$hdr"
    cat <<'EOF2'
return normtune.sweep {
  op = "rmsnorm_bwd", shapes = shapes,
  families = { persistent = {
    params = {block = {64, 128, 256, 512, 1024}, chunks = normtune.range(1, 8), stages = {1, 2, 3, 4}, k = {0, 1, 2, 4, 8}},
    where = function(p, s)
      return want[string.format("%d %d block=%d,chunks=%d,stages=%d,k=%d", s.N, s.M, p.block, p.chunks, p.stages, p.k)] == true
    end } },
}
EOF2
} >"$T/lib_configs.lua"
NORMTUNE_CACHE=${NORMTUNE_CACHE:-$T/cache} "$NORMTUNE" compile "$T/lib_configs.lua" --arch sm_90a >"$T/nvrtc.out" 2>&1
awk '$3 == "ok" && $NF ~ /^1?[0-9]+>$/ { k = $(NF-3) $(NF-2) $(NF-1) $NF; gsub(/nt_persist<|>/, "", k); print k, $4 }' \
    "$T/nvrtc.out" | sort -u >"$T/nvrtc.regs"
nk=$(wc -l <"$T/nvcc.regs"); nd=$(join "$T/nvcc.regs" "$T/nvrtc.regs" | awk '$2 != $3' | wc -l)
nj=$(join "$T/nvcc.regs" "$T/nvrtc.regs" | wc -l)
if [ "$nk" -gt 0 ] && [ "$nk" = "$nj" ] && [ "$nd" = 0 ] && [ "$nk" = "$want" ]; then
    ok same_registers_as_tuner; echo "  $nk persistent kernels, nvcc and NVRTC agree"
else
    bad same_registers_as_tuner "nvcc $nk kernels, matched $nj, differing $nd (header lists ${want:-?}): $(join -a1 "$T/nvcc.regs" "$T/nvrtc.regs" | awk '$2 != $3' | head -5 | tr '\n' ';') $(tail -3 "$T/nvrtc.out")"
fi

# a C program linked against each library: argument errors need no GPU
cat >"$T/p.c" <<'EOF2'
#include <stdio.h>
#include <string.h>
#include "normtune.h"
int main(void) {
    size_t n = 0;
    static char buf[64] __attribute__((aligned(16)));
    int a = normtune_rmsnorm_bwd(NULL, buf, buf, buf, buf, 4, 64, 1e-6f, 0, buf, 64, 0);
    int b = normtune_rmsnorm_bwd(buf, buf, buf, buf, buf, 4, 60, 1e-6f, 0, buf, 64, 0);
    int c = normtune_rmsnorm_bwd(buf, buf, buf, buf, buf + 2, 4, 64, 1e-6f, 0, buf, 64, 0);
    int d = normtune_rmsnorm_bwd_workspace_size(0, 64, &n);
    printf("%d %d %d %d %s|%s\n", a, b, c, d, normtune_strerror(NORMTUNE_ERROR_UNSUPPORTED_N),
           normtune_version());
    return 0;
}
EOF2
hash=$(sed -n 's/^#define NORMTUNE_SOURCE_HASH "\(.*\)"$/\1/p' "$hdr")
for lib in a so; do
    if [ $lib = a ]; then L="$B/libnormtune.a -L$CUDA/lib64 -lcudart_static -lpthread -ldl -lrt -lm"
    else L="-L$B -lnormtune -Wl,-rpath,$B -L$CUDA/lib64 -lcudart -Wl,-rpath,$CUDA/lib64"; fi
    if cc -std=c11 -Wall -Werror -I"$root/kernels" -o "$T/p_$lib" "$T/p.c" $L -Wl,--no-undefined \
        >"$T/p_$lib.out" 2>&1; then
        ok "link_$lib"
        out=$("$T/p_$lib" 2>&1)
        case "$out" in
            "1 3 4 2 N must be a multiple of 8"*"$hash"*) ok "run_$lib" ;;
            *) bad "run_$lib" "$out" ;;
        esac
    else
        bad "link_$lib" "$(head -5 "$T/p_$lib.out")"
    fi
done

# a stale header is refused, naming both hashes, and nothing is clobbered
sed 's/^#define NORMTUNE_SOURCE_HASH ".*"$/#define NORMTUNE_SOURCE_HASH "0123456789abcdef"/' "$hdr" >"$T/stale.h"
cp "$B/libnormtune.a" "$T/keep.a"; cp "$B/libnormtune.so" "$T/keep.so"; cp "$hdr" "$T/keep.h"
sleep 1
if make -C "$root" lib DISPATCH="$T/stale.h" >"$T/stale.out" 2>&1; then
    bad stale_refused "make lib accepted a header with another source hash"
else
    ok stale_refused
fi
grep -q 0123456789abcdef "$T/stale.out" && [ -n "$cur" ] && grep -q "$cur" "$T/stale.out" \
    && ok stale_names_both_hashes || bad stale_names_both_hashes "$(grep -i error "$T/stale.out" | head -2)"
cmp -s "$T/keep.a" "$B/libnormtune.a" && cmp -s "$T/keep.so" "$B/libnormtune.so" && cmp -s "$T/keep.h" "$hdr" \
    && ok stale_not_clobbered || bad stale_not_clobbered
make -C "$root" lib DISPATCH="$T/missing.h" >"$T/missing.out" 2>&1 && bad missing_header_refused \
    || ok missing_header_refused

# install, then the example against the install with pkg-config
I=$T/inst
if make -C "$root" install PREFIX="$I" DISPATCH="$D" >"$T/inst.out" 2>&1 && [ -f "$I/include/normtune.h" ] \
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
make -C "$root" examples DISPATCH="$D" >"$T/ex2.out" 2>&1 && [ -x "$B/examples/rmsnorm_bwd" ] \
    && ok example_builds_in_tree || bad example_builds_in_tree "$(tail -3 "$T/ex2.out")"

rm -rf "$T"
echo "RESULT $passed $failed"
[ "$failed" = 0 ]
