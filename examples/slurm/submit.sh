#!/bin/sh
# submit.sh -- tune a sweep on a Slurm cluster: a job array of N tasks, each
# a shard of the script (tune-shard.sh, one GPU each), then a job that
# merges their databases (merge-shards.sh) once every task has succeeded.
#
#   sh examples/slurm/submit.sh [-n N] [-s "SBATCH OPTIONS"] SCRIPT OUTDIR OUT.db [RUN OPTIONS]
#
#   -n N   tasks in the array (4)
#   -s S   more options for the array's sbatch ("--gres=gpu:1" by default;
#          a partition, an account, a time limit: your cluster's)
#
# Prints the two job ids.  Slurm runs and requeues the tasks; normtune
# only splits the sweep deterministically (run --shard) and merges.
# NORMTUNE names the binary (default: normtune on PATH) and NORMTUNE_SEED a
# database each task's new one starts as a copy of (tune-shard.sh), both
# passed to the jobs through the environment as sbatch does by default.
set -u
n=4 sopts="--gres=gpu:1"
while getopts n:s: o; do
    case $o in
        n) n=$OPTARG ;;
        s) sopts=$OPTARG ;;
        *) echo "usage: submit.sh [-n N] [-s SBATCH_OPTIONS] SCRIPT OUTDIR OUT.db [RUN OPTIONS]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [ $# -lt 3 ]; then
    echo "usage: submit.sh [-n N] [-s SBATCH_OPTIONS] SCRIPT OUTDIR OUT.db [RUN OPTIONS]" >&2
    exit 2
fi
case $n in ''|*[!0-9]*|0) echo "submit.sh: -n needs a positive whole number, got '$n'" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
script=$1 out=$2 dest=$3
shift 3
mkdir -p "$out" || exit 1
# shellcheck disable=SC2086  # sopts is a list of options
array=$(sbatch --parsable --array=0-$((n - 1)) $sopts -o "$out/tune-%A_%a.log" \
        "$here/tune-shard.sh" "$script" "$out" "$@") || exit 1
array=${array%%;*}
merge=$(sbatch --parsable --dependency=afterok:"$array" -o "$out/merge-%j.log" \
        "$here/merge-shards.sh" "$out" "$dest") || exit 1
merge=${merge%%;*}
echo "submit.sh: job array $array ($n shards of $script into $out), merge job $merge (into $dest)"
