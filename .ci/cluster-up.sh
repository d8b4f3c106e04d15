#!/usr/bin/env bash
# Start an N-node Slurm cluster on this one machine (default 4 nodes under 2 leaf switches and one
# top switch), for the `ci` ReFrame system's `cluster` partition (config/systems/ci.py).  Root only.
#
#   bash .ci/cluster-up.sh [--nodes 4] [--leaves 2] [--cpus 2] [--memory 2000]
#                          [--inter-switch-rate 50mbit] [--inter-switch-delay 0]
#   export SLURM_CONF=/tmp/gpucomm-cluster/slurm.conf     # what sinfo/sbatch/ReFrame talk to
#   bash .ci/cluster-down.sh                              # stops and deletes all of it
#
# Every node is a network namespace + UTS namespace (hostname gcn<i>) with its own slurmd, spool,
# pid file and log; one slurmctld (topology/tree, topology.conf: leaf<l> switches under "top")
# and munge (reused where one already answers).  Its own config file ($STATE/slurm.conf, pointed
# at by SLURM_CONF) and ports (6917/6918): /etc/slurm is not touched, so the one-node cluster of
# .ci/slurm-up.sh may run beside it.  Names and addresses: .ci/cluster-lib.sh.
#
# Network: the nodes' veths hang on one bridge per leaf switch (gcbr1, gcbr2, ...), each leaf
# bridge joined to the top bridge gcbr0 by a veth pair, the inter-switch link.  Both ends of every
# inter-switch link get a token bucket (tc tbf) of --inter-switch-rate, so traffic between nodes of
# different leaf switches crosses one link of that rate per direction while same-switch traffic
# stays on one bridge (memory speed).  --inter-switch-delay adds a netem delay on the upward end
# where the kernel has sch_netem (the CI machine's kernel has only tbf/htb: there it is skipped
# with a warning).  Addresses: 10.77.0.0/24 on those bridges only; slurmctld at 10.77.0.254 on
# gcbr0 (the host side of the top switch).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cluster-lib.sh
. "$HERE/cluster-lib.sh"
# shellcheck source=munge-lib.sh
. "$HERE/munge-lib.sh"

NODES=4 LEAVES=2 CPUS=2 MEMORY=2000 RATE=50mbit DELAY=0
while [ $# -gt 0 ]; do
    case $1 in
        --nodes) NODES=$2; shift 2 ;;
        --leaves) LEAVES=$2; shift 2 ;;
        --cpus) CPUS=$2; shift 2 ;;
        --memory) MEMORY=$2; shift 2 ;;
        --inter-switch-rate) RATE=$2; shift 2 ;;
        --inter-switch-delay) DELAY=$2; shift 2 ;;
        -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
        *) echo "cluster-up: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
log() { echo "cluster-up: $*"; }

if [ "$(id -u)" != 0 ]; then
    echo "cluster-up: must run as root (namespaces, bridges, daemons)" >&2
    exit 1
fi
lock_slurm cluster-up
if alive "$STATE/pids/slurmctld.pid"; then
    log "already running (state in $STATE; bash .ci/cluster-down.sh first to change it)"
    exit 0
fi
if [ "$NODES" -lt 2 ] || [ "$LEAVES" -lt 1 ] || [ "$LEAVES" -gt "$NODES" ] || [ "$NODES" -gt 200 ]; then
    echo "cluster-up: need 2 <= nodes <= 200 and 1 <= leaves <= nodes" >&2
    exit 2
fi
if [ -s "$STATE/created" ]; then  # a cluster that was never torn down: its own record says what
    log "tearing down the stale cluster recorded in $STATE/created"
    bash "$HERE/cluster-down.sh"
fi
if ip link show gcbr0 >/dev/null 2>&1; then
    echo "cluster-up: bridge gcbr0 exists already, not made by a cluster recorded in $STATE" >&2
    exit 1
fi
for i in $(seq "$NODES"); do
    if ip netns list | grep -qw "gcn$i" || ip link show "gcv$i" >/dev/null 2>&1; then
        echo "cluster-up: netns/link of gcn$i exists already (a cluster not torn down?): bash .ci/cluster-down.sh" >&2
        exit 1
    fi
done

# -- packages, as slurm-up.sh
pkgs=(slurmctld slurmd slurm-client munge libpmix-dev iproute2)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

rm -rf "$STATE"
mkdir -p "$STATE/ctld" "$STATE/spool" "$STATE/log" "$STATE/pids"
: >"$STATE/created"
# a failure half-way tears down what was made so far
trap 'rc=$?; if [ $rc -ne 0 ]; then echo "cluster-up: failed (rc $rc), tearing down" >&2;
      tail -n 15 "$STATE"/log/*.log >&2 2>/dev/null || true; bash "$HERE/cluster-down.sh"; fi' EXIT

# -- munge: reuse a working one (slurm-up.sh's), else start one and own it
ensure_munged "$STATE/pids/munged.pid"

# -- switches: top bridge gcbr0 (with slurmctld's address), leaf bridges joined by shaped veths
per_leaf=$(( (NODES + LEAVES - 1) / LEAVES ))
leaf_of() { echo $(( ($1 - 1) / per_leaf + 1 )); }
ip link add gcbr0 type bridge; record link gcbr0
ip addr add "$CTL_ADDR/24" dev gcbr0
ip link set gcbr0 up
netem_ok=1
for l in $(seq "$LEAVES"); do
    ip link add "gcbr$l" type bridge; record link "gcbr$l"
    ip link set "gcbr$l" up
    ip link add "gcup$l" type veth peer name "gcdn$l"; record link "gcup$l"
    ip link set "gcup$l" master "gcbr$l" up
    ip link set "gcdn$l" master gcbr0 up
    shape "gcup$l" "$RATE"
    shape "gcdn$l" "$RATE"
    if [ "$DELAY" != 0 ] && [ "$netem_ok" = 1 ]; then
        tc qdisc del dev "gcup$l" root
        if tc qdisc add dev "gcup$l" root handle 1: netem delay "$DELAY" rate "$RATE" 2>/dev/null; then
            :
        else
            netem_ok=0
            shape "gcup$l" "$RATE"
            log "WARNING: no sch_netem in this kernel: --inter-switch-delay $DELAY not applied (rate only)"
        fi
    fi
done

# -- nodes: netns + veth on the leaf bridge; /etc/hosts of the cluster for every namespace
{
    echo "127.0.0.1 localhost"
    echo "$CTL_ADDR $CTL_NAME"
    for i in $(seq "$NODES"); do echo "$(node_addr "$i") $(node_name "$i")"; done
} >"$STATE/hosts"
for i in $(seq "$NODES"); do
    n=$(node_name "$i")
    mkdir -p "$STATE/tmp/$n"
    ip netns add "$n"; record netns "$n"
    ip link add "gcv$i" type veth peer name eth0 netns "$n"; record link "gcv$i"
    ip link set "gcv$i" master "gcbr$(leaf_of "$i")" up
    ip -n "$n" addr add "$(node_addr "$i")/24" dev eth0
    ip -n "$n" link set lo up
    ip -n "$n" link set eth0 up
done

# -- Slurm configuration
nodes_expr="gcn[1-$NODES]"
{
    echo "# written by gpucomm .ci/cluster-up.sh"
    for l in $(seq "$LEAVES"); do
        first=$(( (l - 1) * per_leaf + 1 )); last=$(( l * per_leaf )); [ $last -gt "$NODES" ] && last=$NODES
        echo "SwitchName=leaf$l Nodes=gcn[$first-$last]"
    done
    echo "SwitchName=top Switches=leaf[1-$LEAVES]"
} >"$STATE/topology.conf"
cat >"$CONF" <<CONF
# written by gpucomm .ci/cluster-up.sh
ClusterName=gpucomm-cluster
SlurmctldHost=$CTL_NAME($CTL_ADDR)
SlurmctldPort=$CTL_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool/%n
# node-local temporary space: the PMIx plugin puts its client directory (spmix_appdir_*) there,
# which must not be shared between the "nodes" (they share /tmp)
TmpFS=$STATE/tmp/%n
SlurmctldPidFile=$STATE/pids/slurmctld.pid
SlurmdPidFile=$STATE/pids/slurmd.%n.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
TopologyPlugin=topology/tree
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
# a node whose slurmd died is DOWN (and its jobs NODE_FAIL) within ~20 s
SlurmdTimeout=15
InactiveLimit=0
# a job whose node failed ends there (NODE_FAIL) instead of being requeued
JobRequeue=0
KillWait=5
MinJobAge=300
CONF
for i in $(seq "$NODES"); do
    echo "NodeName=$(node_name "$i") NodeHostname=$(node_name "$i") NodeAddr=$(node_addr "$i") CPUs=$CPUS RealMemory=$MEMORY State=UNKNOWN" >>"$CONF"
done
echo "PartitionName=cluster Nodes=$nodes_expr Default=YES MaxTime=60 State=UP OverSubscribe=NO" >>"$CONF"
cat >"$STATE/cluster.env" <<ENV
NODES=$NODES
LEAVES=$LEAVES
RATE=$RATE
DELAY=$DELAY
SLURM_CONF=$CONF
ENV

# -- daemons: slurmctld in the host netns under its own hostname, a slurmd per node namespace
log "starting slurmctld and $NODES slurmd (logs in $STATE/log)"
unshare --uts --mount --propagation private -- sh -c \
    "mount --bind '$STATE/hosts' /etc/hosts && hostname '$CTL_NAME' && exec /usr/sbin/slurmctld -f '$CONF'" 9>&-
for i in $(seq "$NODES"); do start_slurmd "$(node_name "$i")"; done

for t in $(seq 90); do
    idle=$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
    if [ "$idle" -eq "$NODES" ]; then
        log "$NODES nodes idle after ${t}s; export SLURM_CONF=$CONF"
        sinfo
        scontrol show topology
        trap - EXIT
        exit 0
    fi
    sleep 1
done
echo "cluster-up: nodes not idle after 90 s:" >&2
sinfo -N >&2 || true
exit 1
