#!/bin/bash
# End to end through a real Slurm (docs/DISTRIBUTED.md): start a single-node Slurm on this
# machine (Debian's slurm-wlm and munge, as root, no systemd, everything in a temp dir),
# submit a tiny bench and a tiny study with slurm-submit.sh (job arrays, afterok
# dependencies), wait for them, make the same bench and study with `rdbench run` and
# `rdbench study`, and compare (tests/distributed.rs, the ignored test
# `slurm_merges_equal_single_machine`: equal but for timing and measured memory).
#   sudo scripts/dist/slurm-local-test.sh        (needs: apt-get install -y slurm-wlm munge)
# RDBENCH: the rdbench binary (default $CARGO_TARGET_DIR/release/rdbench, else target/release).
# Prints how long Slurm took to come up and each stage's time; stops the daemons it started.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${RDBENCH:=${CARGO_TARGET_DIR:-$root/target}/release/rdbench}"
[ -x "$RDBENCH" ] || { echo "build first: cargo build --release ($RDBENCH not found)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "run as root: it starts munged, slurmctld and slurmd" >&2; exit 2; }
for b in munged slurmctld slurmd sbatch; do
  command -v $b >/dev/null || { echo "no $b: apt-get install -y slurm-wlm munge" >&2; exit 2; }
done
export RDBENCH
work=$(mktemp -d /tmp/rdbench-slurm.XXXXXX)
chmod 755 "$work" # munged runs as munge
echo "work directory: $work"
pids=()
stop() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
}
trap stop EXIT
t0=$(date +%s.%N)
since() { echo "$(date +%s.%N) - $1" | bc; }

# munge: its own key and socket in the temp dir.
mkdir -p "$work/munge"
dd if=/dev/urandom bs=1 count=1024 of="$work/munge/munge.key" status=none
chown -R munge: "$work/munge"; chmod 711 "$work/munge"; chmod 400 "$work/munge/munge.key"
runuser -u munge -- munged --key-file="$work/munge/munge.key" --socket="$work/munge/socket" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" --seed-file="$work/munge/seed"
pids+=("$(cat "$work/munge/munged.pid")")

host=$(hostname -s)
cpus=$(nproc)
mkdir -p "$work/state" "$work/spool"
cat > "$work/slurm.conf" <<CONF
ClusterName=rdbench
SlurmctldHost=$host
AuthType=auth/munge
AuthInfo=socket=$work/munge/socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$work/slurm.conf
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
pids+=("$(cat "$work/slurmctld.pid" 2>/dev/null || pgrep -n slurmctld)")
for _ in $(seq 1 600); do
  sinfo -h -o %T 2>/dev/null | grep -qx idle && break
  sleep 0.1
done
sinfo -h -o %T | grep -qx idle || { echo "slurm did not come up: see $work/*.log" >&2; exit 1; }
[ -f "$work/slurmd.pid" ] && pids+=("$(cat "$work/slurmd.pid")")
echo "slurm up in $(since "$t0") s ($(sinfo -h -o '%D node, %c CPUs, %T'))"

tiny=(--seeds 2 --sweep-seeds 2 --lrs 0.003,0.01 --epochs 2 --hidden 8 --r-max 4 --train-size 100)
wait_jobs() { # until none of the jobs $@ is queued; a failed job leaves its followers stuck
  local ids out
  ids=$(echo "$@" | tr ' ' ,)
  while true; do
    out=$(squeue -h -j "$ids" -o '%i %T %r') || { echo "squeue failed on jobs $ids" >&2; exit 1; }
    [ -n "$out" ] || break
    if grep -q DependencyNeverSatisfied <<<"$out"; then
      echo "a job failed: $out (see $work/*/logs)" >&2; exit 1
    fi
    sleep 1
  done
}
t1=$(date +%s.%N)
bench_jobs=$("$root/scripts/dist/slurm-submit.sh" "$work/bench" 3 "${tiny[@]}")
study_jobs=$("$root/scripts/dist/slurm-submit.sh" "$work/study" 3 --study --track dynamics "${tiny[@]}")
echo "submitted: bench jobs $bench_jobs; study jobs $study_jobs"
# shellcheck disable=SC2086
wait_jobs $bench_jobs $study_jobs
for f in "$work/bench/bench_report.json" "$work/study/study_report.json"; do
  [ -f "$f" ] || { echo "no $f: see $work/*/logs" >&2; exit 1; }
done
echo "both through slurm in $(since "$t1") s"
t2=$(date +%s.%N)
"$RDBENCH" run --quiet "${tiny[@]}" --out "$work/bench/single.json" >/dev/null
"$RDBENCH" study --quiet --track dynamics "${tiny[@]}" --out "$work/study/single.json" \
  --chart "$work/study/c.svg" --frontier-chart "$work/study/f.svg" >/dev/null
echo "the same on one machine in $(since "$t2") s"
cd "$root"
RDBENCH_SLURM_DIR=$work cargo test --release --test distributed -- --ignored slurm_merges_equal_single_machine
echo "slurm end to end: ok ($(since "$t0") s in all)"
