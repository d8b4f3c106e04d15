#!/usr/bin/env bash
# Start an N-node Slurm cluster on this one machine (default 4 nodes under 2 leaf switches and one
# top switch), for the `ci` ReFrame system's `cluster` partition (config/systems/ci.py).  Root only.
#
#   bash .ci/cluster-up.sh [--nodes 4] [--leaves 2] [--cpus 2] [--memory 2000]
#                          [--inter-switch-rate 50mbit|none] [--inter-switch-delay 0]
#                          [--partition cluster] [--gpu-files /dev/nvidia0,...]
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
#
# The same cluster under other names, subnet, ports, binaries and munged (bench/gpu-cluster.sh's
# GPU nodes): the environment of .ci/cluster-lib.sh, and GPUCOMM_CLUSTER_MARK (slurm.conf's first
# line, which config/systems/ selects the partition by) and GPUCOMM_CLUSTER_NAME (ClusterName).
# --partition names the Slurm partition; --gpu-files gives every node one GPU as Slurm GRES
# (gres.conf: node i the ((i-1) mod n)-th file; several nodes may share one), so that a job's
# --gpus-per-node sets its CUDA_VISIBLE_DEVICES.  Packages are installed with apt only where
# GPUCOMM_SLURM_ROOT is unset.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cluster-lib.sh
. "$HERE/cluster-lib.sh"
# shellcheck source=munge-lib.sh
. "$HERE/munge-lib.sh"

NODES=4 LEAVES=2 CPUS=2 MEMORY=2000 RATE=50mbit DELAY=0 PARTITION=cluster GPU_FILES=""
MARK=${GPUCOMM_CLUSTER_MARK:-# written by gpucomm .ci/cluster-up.sh}
while [ $# -gt 0 ]; do
    case $1 in
        --nodes) NODES=$2; shift 2 ;;
        --leaves) LEAVES=$2; shift 2 ;;
        --cpus) CPUS=$2; shift 2 ;;
        --memory) MEMORY=$2; shift 2 ;;
        --inter-switch-rate) RATE=$2; shift 2 ;;
        --inter-switch-delay) DELAY=$2; shift 2 ;;
        --partition) PARTITION=$2; shift 2 ;;
        --gpu-files) GPU_FILES=$2; shift 2 ;;
        -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
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
if [ "$NETMODE" = netns ] && ip link show "${NAMES}br0" >/dev/null 2>&1; then
    echo "cluster-up: bridge ${NAMES}br0 exists already, not made by a cluster recorded in $STATE" >&2
    exit 1
fi
for i in $(seq "$NODES"); do
    [ "$NETMODE" = netns ] || break
    if ip netns list | grep -qw "$(node_name "$i")" || ip link show "${NAMES}v$i" >/dev/null 2>&1; then
        echo "cluster-up: netns/link of $(node_name "$i") exists already (a cluster not torn down?): bash .ci/cluster-down.sh" >&2
        exit 1
    fi
done

# -- packages, as slurm-up.sh (none where they were unpacked into GPUCOMM_SLURM_ROOT)
pkgs=(slurmctld slurmd slurm-client munge libpmix-dev iproute2)
missing=()
for p in "${pkgs[@]}"; do
    [ -z "$SLURM_ROOT" ] || break
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

# -- munge: a private one (GPUCOMM_CLUSTER_MUNGE), else reuse a working one (slurm-up.sh's),
#    else start one and own it
if [ -n "$MUNGE_DIR" ]; then
    private_munged "$MUNGE_DIR" "$STATE/pids/munged.pid"
else
    ensure_munged "$STATE/pids/munged.pid"
fi

# -- switches: top bridge gcbr0 (with slurmctld's address), leaf bridges joined by shaped veths
per_leaf=$(( (NODES + LEAVES - 1) / LEAVES ))
leaf_of() { echo $(( ($1 - 1) / per_leaf + 1 )); }
make_switches() {
    local top=${NAMES}br0 l br up dn netem_ok=1
    ip link add "$top" type bridge; record link "$top"
    ip addr add "$CTL_ADDR/24" dev "$top"
    ip link set "$top" up
    for l in $(seq "$LEAVES"); do
        br=${NAMES}br$l up=${NAMES}up$l dn=${NAMES}dn$l
        ip link add "$br" type bridge; record link "$br"
        ip link set "$br" up
        ip link add "$up" type veth peer name "$dn"; record link "$up"
        ip link set "$up" master "$br" up
        ip link set "$dn" master "$top" up
        [ "$RATE" = none ] && continue   # unshaped: the bridges' own speed
        shape "$up" "$RATE"
        shape "$dn" "$RATE"
        if [ "$DELAY" != 0 ] && [ "$netem_ok" = 1 ]; then
            tc qdisc del dev "$up" root
            if tc qdisc add dev "$up" root handle 1: netem delay "$DELAY" rate "$RATE" 2>/dev/null; then
                :
            else
                netem_ok=0
                shape "$up" "$RATE"
                log "WARNING: no sch_netem in this kernel: --inter-switch-delay $DELAY not applied (rate only)"
            fi
        fi
    done
}
# host network: no switches (topology.conf still has them: Slurm places jobs by it)
if [ "$NETMODE" = netns ]; then make_switches; fi

# -- nodes: netns + veth on the leaf bridge; /etc/hosts of the cluster for every namespace
{
    echo "127.0.0.1 localhost"
    echo "$CTL_ADDR $CTL_NAME"
    for i in $(seq "$NODES"); do echo "$(node_addr "$i") $(node_name "$i")"; done
} >"$STATE/hosts"
for i in $(seq "$NODES"); do
    n=$(node_name "$i")
    mkdir -p "$STATE/tmp/$n"
    [ "$NETMODE" = netns ] || continue
    ip netns add "$n"; record netns "$n"
    ip link add "${NAMES}v$i" type veth peer name eth0 netns "$n"; record link "${NAMES}v$i"
    ip link set "${NAMES}v$i" master "${NAMES}br$(leaf_of "$i")" up
    ip -n "$n" addr add "$(node_addr "$i")/24" dev eth0
    ip -n "$n" link set lo up
    ip -n "$n" link set eth0 up
done

# -- Slurm configuration
nodes_expr="${NAMES}n[1-$NODES]"
{
    echo "$MARK"
    for l in $(seq "$LEAVES"); do
        first=$(( (l - 1) * per_leaf + 1 )); last=$(( l * per_leaf )); [ $last -gt "$NODES" ] && last=$NODES
        echo "SwitchName=leaf$l Nodes=${NAMES}n[$first-$last]"
    done
    echo "SwitchName=top Switches=leaf[1-$LEAVES]"
} >"$STATE/topology.conf"
cat >"$CONF" <<CONF
$MARK
ClusterName=${GPUCOMM_CLUSTER_NAME:-gpucomm-cluster}
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
if [ -n "$SLURM_ROOT" ]; then  # the unpacked plugins; no spank plugins (/etc/slurm's list)
    : >"$STATE/plugstack.conf"
    printf 'PluginDir=%s\nPlugStackConfig=%s\n' "$SLURM_PLUGINS" "$STATE/plugstack.conf" >>"$CONF"
    # a machine without Debian's Slurm may have no systemd: under cgroup v2, slurmd makes its
    # cgroups itself instead of asking systemd over D-Bus (cgroup.conf beside slurm.conf)
    printf '%s\nIgnoreSystemd=yes\nIgnoreSystemdOnFailure=yes\n' "# written by gpucomm .ci/cluster-up.sh" >"$STATE/cgroup.conf"
    # ... inside system.slice/<node>_slurmstepd.scope, which it makes with a plain mkdir: where
    # no systemd made system.slice (a bare VM, a container), slurmd's cgroup/v2 init fails
    # ("Could not create scope directory .../system.slice/...: No such file or directory");
    # it is made here and removed at tear-down (with the nodes' scopes) when this made it
    cg=/sys/fs/cgroup
    if [ "$(stat -fc %T $cg 2>/dev/null)" = cgroup2fs ] && [ ! -d $cg/system.slice ]; then
        mkdir $cg/system.slice && record cgroup $cg/system.slice
        # the controllers slurmd asks for, where the kernel offers them (else it logs and goes on)
        for c in cpu cpuset memory; do echo "+$c" >$cg/cgroup.subtree_control 2>/dev/null || true; done
    fi
fi
if [ -n "$MUNGE_DIR" ]; then  # auth/munge and cred/munge of every daemon and client
    echo "AuthInfo=socket=$MUNGE_DIR/munge.socket" >>"$CONF"
fi
if [ -n "$GPU_FILES" ]; then  # one GPU per node; gres.conf beside slurm.conf
    IFS=, read -r -a gpu_files <<<"$GPU_FILES"
    echo "GresTypes=gpu" >>"$CONF"
    echo "# written by gpucomm .ci/cluster-up.sh: one GPU per node" >"$STATE/gres.conf"
    # Slurm numbers a node's GPUs from 0 (CUDA_VISIBLE_DEVICES=0 on a node whose GPU is
    # /dev/nvidia1); on one machine a task needs the machine's number: a task prolog gives it
    {
        echo "#!/bin/sh"
        echo "# written by gpucomm .ci/cluster-up.sh: a task's GPU by its number on this machine"
        echo '[ -n "${CUDA_VISIBLE_DEVICES:-}" ] || exit 0'
        echo 'case $SLURMD_NODENAME in'
    } >"$STATE/task-prolog.sh"
    for i in $(seq "$NODES"); do
        file=${gpu_files[$(( (i - 1) % ${#gpu_files[@]} ))]}
        echo "NodeName=$(node_name "$i") Name=gpu File=$file" >>"$STATE/gres.conf"
        [[ $file =~ ([0-9]+)$ ]] && echo "    $(node_name "$i")) echo export CUDA_VISIBLE_DEVICES=${BASH_REMATCH[1]} ;;" >>"$STATE/task-prolog.sh"
    done
    echo "esac" >>"$STATE/task-prolog.sh"
    chmod +x "$STATE/task-prolog.sh"
    echo "TaskProlog=$STATE/task-prolog.sh" >>"$CONF"
fi
for i in $(seq "$NODES"); do
    extra=""
    [ "$NETMODE" = host ] && extra+=" Port=$(node_port "$i")"
    [ -n "$GPU_FILES" ] && extra+=" Gres=gpu:1"
    echo "NodeName=$(node_name "$i") NodeHostname=$(node_name "$i") NodeAddr=$(node_addr "$i") CPUs=$CPUS RealMemory=$MEMORY${extra} State=UNKNOWN" >>"$CONF"
done
echo "PartitionName=$PARTITION Nodes=$nodes_expr Default=YES MaxTime=60 State=UP OverSubscribe=NO" >>"$CONF"
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
    "mount --bind '$STATE/hosts' /etc/hosts && hostname '$CTL_NAME' && exec $SLURMCTLD -f '$CONF'" 9>&-
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
