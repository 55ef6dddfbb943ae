#!/bin/sh
# test_slurm.sh -- the job-array recipe (examples/slurm/) under a real Slurm:
# a one-node cluster of this machine (munged, slurmctld and slurmd of
# Debian's packages, started here on ports of their own with a
# configuration in the scratch folder, stopped at the end), to which
# examples/slurm/submit.sh submits a job array of three shards of a sweep
# and the job that merges them.  Each task runs `normtune run --shard I/3
# --simulate data/results.db` (the replay of the shipped database's GPU: no
# GPU needed); the merged database must hold the results of one whole run
# of the sweep, and each task must have run its own shard.  Then the same
# with NORMTUNE_SEED: every task starts from a copy of the whole run's
# database and measures nothing.
#
# Slurm is the engine: normtune only splits and merges (docs/guide.md,
# "Many machines").  The packages are installed with apt-get when missing
# and this runs as root (as make test's other dependencies are); else the
# test fails naming them.  The waits for the daemons and the jobs are
# guards against a hang (minutes), never a measure of speed.
#
# Needs NORMTUNE and NT_TMP; prints PASS/FAIL lines and "RESULT passed failed".
NAME=test_slurm
. "$(dirname "$0")/lib.sh"
db="$root/data/results.db"
export NORMTUNE_SCRIPT_BUDGET="${NORMTUNE_SCRIPT_BUDGET:-30,60}"
pkgs="slurmctld slurmd slurm-client munge"

missing=""
for c in slurmctld slurmd sbatch squeue munged; do
    command -v "$c" >/dev/null 2>&1 || [ -x "/usr/sbin/$c" ] || missing=yes
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing $pkgs with apt-get"
        apt-get update -q >/dev/null 2>&1
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q $pkgs >/dev/null 2>&1
    fi
fi
PATH=$PATH:/usr/sbin
for c in slurmctld slurmd sbatch squeue munged; do
    if ! command -v "$c" >/dev/null 2>&1; then
        bad slurm_installed "no $c (run as root: apt-get install $pkgs)"
        finish
        exit 0
    fi
done
ok slurm_installed

# --- a one-node cluster in $T ------------------------------------------------
S=$T/slurm
mkdir -p "$S/ctld" "$S/d" "$S/log"
host=$(hostname)
# two ports of this test's own: a pair 2k, 2k + 1 from the pid (two tests
# started together have neighbouring pids, so their pairs differ), moved on
# while one of the pair is already listening
port_used() {
    awk -v p="$(printf '%04X' "$1")" 'FNR > 1 { split($2, a, ":"); if (a[2] == p) f = 1 }
        END { exit !f }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
k=$(($$ % 10000))
while :; do
    base=$((20000 + 2 * k))
    port_used "$base" || port_used $((base + 1)) || break
    k=$(((k + 1) % 10000))
done
dd if=/dev/urandom of="$S/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$S/munge.key"
pids=""
# stop the daemons this test started (before finish removes $T)
stop_all() {
    [ -n "$pids" ] || return 0
    SLURM_CONF=$S/slurm.conf scontrol shutdown >/dev/null 2>&1
    kill $pids 2>/dev/null
    sleep 1
    kill -9 $pids 2>/dev/null
    pids=""
}
trap stop_all EXIT
munged --force --socket="$S/munge.sock" --key-file="$S/munge.key" --pid-file="$S/munged.pid" \
    --log-file="$S/log/munged.log" --seed-file="$S/munge.seed" >"$S/log/munged.out" 2>&1
cat >"$S/slurm.conf" <<EOF
ClusterName=normtune-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$base
SlurmdPort=$((base + 1))
AuthType=auth/munge
AuthInfo=socket=$S/munge.sock
CredType=cred/munge
StateSaveLocation=$S/ctld
SlurmdSpoolDir=$S/d
SlurmctldPidFile=$S/ctld.pid
SlurmdPidFile=$S/d.pid
SlurmctldLogFile=$S/log/ctld.log
SlurmdLogFile=$S/log/d.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$S/slurm.conf
slurmctld -f "$SLURM_CONF" >"$S/log/ctld.out" 2>&1
slurmd -f "$SLURM_CONF" >"$S/log/d.out" 2>&1
# wait_for SECONDS CMD...: poll CMD each second until it succeeds (0) or
# SECONDS have passed (1): a guard against a hang, not a measure of speed
wait_for() {
    _w=$1; shift
    while [ "$_w" -gt 0 ]; do
        "$@" && return 0
        sleep 1
        _w=$((_w - 1))
    done
    return 1
}
pids_written() { [ -s "$S/munged.pid" ] && [ -s "$S/ctld.pid" ] && [ -s "$S/d.pid" ]; }
wait_for 60 pids_written
for p in "$S/munged.pid" "$S/ctld.pid" "$S/d.pid"; do
    [ -s "$p" ] && pids="$pids $(cat "$p")"
done
node_idle() { sinfo -h -o %t 2>/dev/null | grep -q '^idle'; }
if wait_for 120 node_idle; then
    ok cluster_up
else
    bad cluster_up "node not idle: $(sinfo 2>&1 | tail -2); $(tail -n 3 "$S/log/ctld.log" "$S/log/d.log" 2>&1)"
    stop_all
    finish
    exit 0
fi

# --- the sweep, whole here and in shards through Slurm ------------------------
cp "$root/tests/shard_sweep.lua" "$T/sim.lua"
need_sqlite3 "the databases the jobs wrote"
expect whole_run 0 run "$T/sim.lua" --simulate "$db" --db "$T/whole.db"
export NORMTUNE
sh "$root/examples/slurm/submit.sh" -n 3 -s "" "$T/sim.lua" "$T/shards" "$T/merged.db" \
    --simulate "$db" >"$T/submit.out" 2>&1 && ok submit || bad submit "$(cat "$T/submit.out")"
jobs_done() { [ -z "$(squeue -h 2>/dev/null)" ]; }
wait_for 600 jobs_done && ok jobs_finished || bad jobs_finished "$(squeue 2>&1 | head -5)"
for i in 0 1 2; do
    log=$(ls "$T/shards"/tune-*_"$i".log 2>/dev/null | head -1)
    if [ -n "$log" ] && grep -q "shard $i/3: " "$log"; then ok "task_${i}_ran_its_shard"
    else bad "task_${i}_ran_its_shard" "$(cat "$log" 2>/dev/null | head -5)"; fi
done
result_keys "$T/whole.db" >"$T/k_whole"
if [ -s "$T/merged.db" ]; then
    ok merge_job_wrote
    result_keys "$T/merged.db" >"$T/k_merged"
    [ -s "$T/k_whole" ] && cmp -s "$T/k_whole" "$T/k_merged" && ok merged_array_is_the_whole_run ||
        bad merged_array_is_the_whole_run "$(diff "$T/k_whole" "$T/k_merged" | head -3)"
else
    bad merge_job_wrote "$(cat "$T/shards"/merge-*.log 2>/dev/null | tail -3)"
fi
# NORMTUNE_SEED: each shard's new database starts as a copy of it (here the
# whole run's, of the same simulated model): every task reuses, measures 0
NORMTUNE_SEED=$T/whole.db sh "$root/examples/slurm/submit.sh" -n 3 -s "" "$T/sim.lua" \
    "$T/seeded" "$T/seeded.db" --simulate "$db" >"$T/submit2.out" 2>&1 && ok seeded_submit ||
    bad seeded_submit "$(cat "$T/submit2.out")"
wait_for 600 jobs_done && ok seeded_jobs_finished || bad seeded_jobs_finished "$(squeue 2>&1 | head -5)"
n0=$(cat "$T/seeded"/tune-*.log 2>/dev/null | grep -c ": 0 measured")
[ "$n0" = 3 ] && ok seeded_tasks_reuse || bad seeded_tasks_reuse "$n0 of 3 tasks measured nothing"
if [ -s "$T/seeded.db" ]; then
    result_keys "$T/seeded.db" | cmp -s - "$T/k_whole" && ok seeded_merge_is_the_run ||
        bad seeded_merge_is_the_run
else
    bad seeded_merge_is_the_run "no $T/seeded.db"
fi

# the recipe's usage errors
sh "$root/examples/slurm/submit.sh" -n 0 "$T/sim.lua" "$T/out2" "$T/m2.db" >/dev/null 2>"$T/err"
[ $? = 2 ] && ok submit_bad_n || bad submit_bad_n
sh "$root/examples/slurm/tune-shard.sh" "$T/sim.lua" "$T/out3" >/dev/null 2>"$T/err"
[ $? = 2 ] && grep -q "not a task of a job array" "$T/err" && ok shard_outside_array ||
    bad shard_outside_array "$(cat "$T/err")"
sh "$root/examples/slurm/merge-shards.sh" "$T/shards" "$T/merged.db" >/dev/null 2>"$T/err"
[ $? = 2 ] && ok merge_refuses_existing_out || bad merge_refuses_existing_out
stop_all
finish
