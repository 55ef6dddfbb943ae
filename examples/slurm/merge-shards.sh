#!/bin/sh
# merge-shards.sh -- fold the databases of a job array's shards
# (OUTDIR/shard-*.db, tune-shard.sh) into one results database, OUT.db,
# with `normtune merge` (which takes two at a time): the job submit.sh
# runs after the array has finished, or by hand:
#
#   sh examples/slurm/merge-shards.sh OUTDIR OUT.db
#
# OUT.db must not exist; nothing is written to it unless every merge
# succeeds (the folds go through OUTDIR/merge.tmp-*.db).  NORMTUNE names
# the binary (default: normtune on PATH).
#SBATCH --job-name=normtune-merge
#SBATCH --output=normtune-merge-%j.log
set -u
if [ $# -ne 2 ]; then
    echo "usage: merge-shards.sh OUTDIR OUT.db" >&2
    exit 2
fi
out=$1 dest=$2 nt=${NORMTUNE:-normtune}
if [ -e "$dest" ]; then
    echo "merge-shards.sh: $dest exists; give a new file" >&2
    exit 2
fi
set -- "$out"/shard-*.db
if [ ! -e "$1" ]; then
    echo "merge-shards.sh: no shard-*.db in $out" >&2
    exit 1
fi
acc=$1 k=0
shift
for db in "$@"; do
    tmp=$out/merge.tmp-$k.db
    rm -f "$tmp"
    "$nt" merge "$acc" "$db" -o "$tmp" || exit 1
    [ "$k" -gt 0 ] && rm -f "$acc"
    acc=$tmp k=$((k + 1))
done
if [ "$k" = 0 ]; then
    "$nt" merge "$acc" "$acc" -o "$dest" || exit 1   # one shard: a checked copy
else
    mv "$acc" "$dest" || exit 1
fi
echo "merge-shards.sh: $dest: the results of $((k + 1)) shard(s) of $out"
