#!/bin/sh
# merge-shards.sh -- fold the databases of a job array's shards
# (OUTDIR/shard-*.db, tune-shard.sh) into one new results database, OUT.db,
# with `normtune merge` (each result once; OUT.db must not exist and is
# written whole or not at all): the job submit.sh runs after the array has
# finished, or by hand:
#
#   sh examples/slurm/merge-shards.sh OUTDIR OUT.db
#
# NORMTUNE names the binary (default: normtune on PATH).
#SBATCH --job-name=normtune-merge
#SBATCH --output=normtune-merge-%j.log
set -u
if [ $# -ne 2 ]; then
    echo "usage: merge-shards.sh OUTDIR OUT.db" >&2
    exit 2
fi
out=$1 dest=$2
if [ -e "$dest" ]; then
    echo "merge-shards.sh: $dest exists; give a new file" >&2
    exit 2
fi
set -- "$out"/shard-*.db
if [ ! -e "$1" ]; then
    echo "merge-shards.sh: no shard-*.db in $out" >&2
    exit 1
fi
exec "${NORMTUNE:-normtune}" merge "$@" -o "$dest"
