#!/bin/sh
# compare.sh -- where rmsnorm_bwd.cols wins at M = 512 and 1024: for each
# hidden size of the fills here (m512.db.xz, m1024.db.xz; bf16, every
# variant of the default backward's families and every `cols` config, as
# ../cols256-h100/fill.sh writes them), `cols`'s best config and median
# beside the best of the other families, and their ratio (above 1: cols
# faster).  Run from the repository root after make build/normtune:
#   sh data/colsmid-h100/compare.sh > data/colsmid-h100/compare.txt
set -u
d=$(dirname "$0")
nt=${NORMTUNE:-build/normtune}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nt_cmp.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
for M in 512 1024; do
    xz -dc "$d/m$M.db.xz" > "$tmp/m$M.db" || exit 1
    echo "M = $M: N, cols's best (us), the others' best (us), others/cols"
    for n in $(awk '!/^#/ { print $2 }' data/cols256-h100/shapes.txt); do   # the grid's 16 N
        "$nt" query --db "$tmp/m$M.db" shape "$n" "$M" > "$tmp/s.txt" || exit 1
        # the table's columns: rank op dtype family params status us ...
        awk -v n="$n" '$2 == "rmsnorm_bwd" && $6 == "ok" {
                 f = $4; us = $7 + 0
                 if (f == "rmsnorm_bwd.cols") { if (!cu || us < cu) { cu = us; cp = $5 } }
                 else if (!ou || us < ou) { ou = us; of = f " " $5 } }
             END { if (!cu || !ou) { print "compare.sh: N = " n ": no result of cols or of the others" > "/dev/stderr"; exit 1 }
                   printf "  %5d  cols %-28s %6.2f   %-62s %6.2f   %.3f\n", n, cp, cu, of, ou, ou / cu }' "$tmp/s.txt" || exit 1
    done
done
