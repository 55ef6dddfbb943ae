#!/bin/sh
# tune-shard.sh -- one task of a Slurm job array: shard
# $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_TASK_COUNT of a sweep script, into a
# database of its own (`normtune run --shard I/N`).  submit.sh submits it;
# by hand:
#
#   sbatch --array=0-7 --gres=gpu:1 examples/slurm/tune-shard.sh SCRIPT OUTDIR [RUN OPTIONS]
#
# writes OUTDIR/shard-I.db (resumed when the task runs again: a requeued or
# failed task measures only what it had not stored).  With NORMTUNE_SEED
# set, a shard's database that does not exist yet starts as a copy of that
# file, as make tune's SEED does (data/results.db: GPUs of a model it holds
# reuse its results).  NORMTUNE names the binary (default: normtune on
# PATH).  Exit status: normtune run's.
#SBATCH --job-name=normtune-tune
#SBATCH --output=normtune-tune-%A_%a.log
set -u
if [ $# -lt 2 ]; then
    echo "usage: sbatch --array=0-N tune-shard.sh SCRIPT OUTDIR [RUN OPTIONS]" >&2
    exit 2
fi
if [ -z "${SLURM_ARRAY_TASK_ID:-}" ] || [ -z "${SLURM_ARRAY_TASK_COUNT:-}" ]; then
    echo "tune-shard.sh: not a task of a job array (submit it with sbatch --array)" >&2
    exit 2
fi
script=$1 out=$2
shift 2
mkdir -p "$out" || exit 1
db=$out/shard-$SLURM_ARRAY_TASK_ID.db
if [ -n "${NORMTUNE_SEED:-}" ] && [ ! -e "$db" ]; then
    # whole or not at all: a copy beside it, then renamed
    cp "$NORMTUNE_SEED" "$db.seed" && chmod u+w "$db.seed" && mv "$db.seed" "$db" || {
        echo "tune-shard.sh: cannot start $db from NORMTUNE_SEED=$NORMTUNE_SEED" >&2
        rm -f "$db.seed"
        exit 1
    }
fi
exec "${NORMTUNE:-normtune}" run "$script" --shard "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT" \
    --db "$db" "$@"
