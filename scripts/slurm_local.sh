#!/usr/bin/env bash
# A real single-node SLURM cluster on this machine (Debian's slurm-wlm and munge, as root), for
# the tests that sweep through `hydra/launcher=slurm` (tests/lifecycle/test_slurm.py):
#   scripts/slurm_local.sh start   install if missing, configure, start, wait until the node idles
#   scripts/slurm_local.sh stop    stop the daemons (the packages stay)
# Its state lives in SLURM_LOCAL_DIR (default /tmp/dfl_bench-slurm). Accounting is off, as on many
# small clusters, so `sacct` fails: the tests see how the launcher lives with that.
set -euo pipefail
DIR=${SLURM_LOCAL_DIR:-/tmp/dfl_bench-slurm}
HOST=$(hostname -s)

install() {
    command -v slurmctld >/dev/null && command -v munged >/dev/null && return 0
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq slurmctld slurmd slurm-client munge >/dev/null
}

configure() {
    mkdir -p "$DIR/state" "$DIR/spool" /etc/slurm /run/munge
    chown munge:munge /run/munge 2>/dev/null || true
    [ -s /etc/munge/munge.key ] || { dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null; chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key; }
    local cpus memory
    cpus=$(nproc)
    memory=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 8 / 10 ))
    cat > /etc/slurm/slurm.conf <<CONF
ClusterName=local
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MinJobAge=300
KillWait=5
NodeName=$HOST CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=debug Nodes=$HOST Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
}

start() {
    install
    configure
    pgrep -x munged >/dev/null || munged --force
    pgrep -x slurmctld >/dev/null || slurmctld
    pgrep -x slurmd >/dev/null || slurmd
    for _ in $(seq 60); do
        if sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
            echo "[slurm_local] node $HOST up ($(nproc) CPUs); state in $DIR"
            return 0
        fi
        scontrol update NodeName="$HOST" State=RESUME >/dev/null 2>&1 || true
        sleep 1
    done
    echo "[slurm_local] the node did not come up; see $DIR/slurmctld.log and $DIR/slurmd.log" >&2
    return 1
}

stop() {
    local daemon
    for daemon in slurmd slurmctld munged; do
        pkill -x "$daemon" 2>/dev/null || true
        for _ in $(seq 50); do pgrep -x "$daemon" >/dev/null || break; sleep 0.2; done
    done
    echo "[slurm_local] stopped"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
