#!/bin/sh
# merge.sh -- after call.sh has run on an H200: fold its fill (every
# family's results at M = 512, cols's among them) whole into a copy of
# data/results.db, export the header from that copy, and print the tuned
# entries at M = 512 it gives.  results.db holds no other shape at M =
# 512, so the fill moves no stored best of the default sweeps' shapes (the
# reason ../cols256-h100/keep_cols.sh kept only cols's results at M =
# 256); its results do join the hints a replay from the neighbours draws
# on, so make test's test_replay has the last word.  With APPLY=1 the copy
# and the header replace data/results.db and kernels/normtune_dispatch.h
# (then run make test: test_shipped_db checks that they agree).
#   sh data/colsmid-h200/merge.sh colsmid.db.xz [WORKDIR]
# DEVICE: export's --device (needed only where the fill's GPU is of
# another model than results.db's).
set -eu
[ $# -ge 1 ] && [ -r "$1" ] || { echo "usage: sh data/colsmid-h200/merge.sh FILL.db[.xz] [WORKDIR]" >&2; exit 2; }
nt=${NORMTUNE:-build/normtune}
w=${2:-$(mktemp -d "${TMPDIR:-/tmp}/nt_colsmid.XXXXXX")}
mkdir -p "$w"
rm -f "$w/fill.db" "$w/new.db"
case "$1" in
    *.xz) xz -dc "$1" > "$w/fill.db" ;;
    *) cp "$1" "$w/fill.db" ;;
esac
"$nt" merge data/results.db "$w/fill.db" -o "$w/new.db"
"$nt" export --db "$w/new.db" ${DEVICE:+--device "$DEVICE"} -o "$w/new.h"
echo "merge.sh: $w/new.db and $w/new.h; the tuned M = 512 rows:"
# the M column by its place under the dashes (a device name has spaces)
"$nt" query --db "$w/new.db" ${DEVICE:+--device "$DEVICE"} best | awk '
    NR == 1 { head = $0; print; next }
    NR == 2 { print; p = 1
              while (match(substr($0, p), /-+/)) {
                  a = p + RSTART - 1; b = RLENGTH
                  t = substr(head, a, b); gsub(/ /, "", t)
                  if (t == "M") { ma = a; mb = b }
                  p = a + b }
              next }
    { m = substr($0, ma, mb); gsub(/ /, "", m); if (m == "512") print }'
if [ "${APPLY:-0}" = 1 ]; then
    cp "$w/new.db" data/results.db
    cp "$w/new.h" kernels/normtune_dispatch.h
    echo "merge.sh: data/results.db and kernels/normtune_dispatch.h replaced; now make test"
fi
