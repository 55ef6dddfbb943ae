#!/bin/sh
# tune-shard.sh -- one task of a Slurm job array: shard
# $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_TASK_COUNT of a sweep script, into a
# database of its own (`normtune run --shard I/N`).  submit.sh submits it;
# by hand:
#
#   sbatch --array=0-7 --gres=gpu:1 examples/slurm/tune-shard.sh SCRIPT OUTDIR [RUN OPTIONS]
#
# writes OUTDIR/shard-I.db (resumed when the task runs again: a requeued or
# failed task measures only what it had not stored).  NORMTUNE names the
# binary (default: normtune on PATH).  Exit status: normtune run's.
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
exec "${NORMTUNE:-normtune}" run "$script" --shard "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT" \
    --db "$out/shard-$SLURM_ARRAY_TASK_ID.db" "$@"
