#!/bin/sh
# keep_cols.sh -- reduce a copy of a fill's database to rmsnorm_bwd.cols's
# results, for `normtune merge` into data/results.db: the fill's other
# families' results are of one more GPU at shapes the default sweeps
# search, where they move the replay's stored bests (merged whole,
# data/cols-h200/cols.db took the backward's cold replay's worst from
# 1.05x to 1.07x); cols is in no default sweep.
#   sh data/cols256-h100/keep_cols.sh FILL.db COLS.db
#   build/normtune merge data/results.db COLS.db -o NEW.db
set -eu
[ $# -eq 2 ] && [ -r "$1" ] && [ ! -e "$2" ] || {
    echo "usage: sh keep_cols.sh FILL.db COLS.db (COLS.db must not exist)" >&2
    exit 2
}
cp "$1" "$2"
sqlite3 "$2" "PRAGMA foreign_keys = ON;
DELETE FROM sample WHERE result_id IN (SELECT r.id FROM result r JOIN variant v
    ON v.id = r.variant_id WHERE v.family != 'rmsnorm_bwd.cols');
DELETE FROM result WHERE variant_id IN (SELECT id FROM variant WHERE family != 'rmsnorm_bwd.cols');
DELETE FROM variant WHERE family != 'rmsnorm_bwd.cols';
VACUUM;"
sqlite3 "$2" "SELECT count(*) || ' cols results kept' FROM result"
