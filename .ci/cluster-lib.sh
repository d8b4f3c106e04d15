# shellcheck shell=bash
# Shared by .ci/cluster-up.sh, .ci/cluster-down.sh and .ci/cluster-ctl.sh (and bench/gpu-cluster.sh,
# which brings up the same cluster of GPU "nodes" under other names): names, addresses, binaries
# and the start of one node's slurmd inside its namespaces.  Sourced, not run.
#
# Layout (defaults; cluster-up.sh records the values it used in $STATE/cluster.env):
#   state dir      $GPUCOMM_CLUSTER_DIR (default /tmp/gpucomm-cluster): slurm.conf, topology.conf,
#                  pids/, log/, spool/<node>/, ctld/, created (every netns/link made, in order)
#   subnet         10.77.0.0/24 on bridges this script creates, nothing else
#   top switch     bridge gcbr0; slurmctld (host netns, own UTS namespace "gcctl") at 10.77.0.254
#   leaf switch l  bridge gcbr<l>, uplink veth gcup<l> (leaf side) <-> gcdn<l> (top side),
#                  shaped with tc on both ends (the inter-switch link)
#   node i         netns gcn<i> + UTS namespace (hostname gcn<i>), eth0 10.77.0.<10+i>, its host end
#                  veth gcv<i> on its leaf bridge; its own slurmd (SlurmdPort 6918)
#   ports          SlurmctldPort 6917, SlurmdPort 6918: the one-node cluster of slurm-up.sh
#                  (6817/6818, /etc/slurm/slurm.conf, state in $GPUCOMM_SLURM_DIR) can run at the
#                  same time; the two share munged (the one that started it owns it; the last one
#                  down stops it) and a lock ($SLURM_LOCK): no two up/down scripts run at once
#
# Parameters (environment; the defaults above are CI's cluster):
#   GPUCOMM_CLUSTER_NAMES    prefix of every name (gc: gcn<i>, gcctl, gcbr<l>, gcup/gcdn<l>, gcv<i>)
#   GPUCOMM_CLUSTER_NET      first three octets of the subnet (10.77.0)
#   GPUCOMM_CLUSTER_PORT     SlurmctldPort; SlurmdPort is the next one (6917)
#   GPUCOMM_CLUSTER_LOCK     the up/down lock (/tmp/gpucomm-slurm-ci.lock, shared with slurm-up.sh)
#   GPUCOMM_CLUSTER_NETMODE  netns: a network namespace per node on the bridges above; host: no
#                            netns, bridge or veth (a kernel without them): every node a UTS +
#                            mount namespace in the host's network, its slurmd on a port of its own
#                            (SlurmdPort + i - 1) and its address 127.x.y.(10+i) on loopback
#   GPUCOMM_SLURM_ROOT       a folder the Debian packages were unpacked into (bench/lib/debs.sh
#                            unpack) instead of /: its daemons, clients and plugins are used, each
#                            program through its wrapper in GPUCOMM_SLURM_ROOT/wrap (first in PATH)
#   GPUCOMM_CLUSTER_MUNGE    a folder for a munged of the cluster's own (key, socket, pid, log,
#                            seed), run as root; unset: the system's munged (/run/munge)

STATE=${GPUCOMM_CLUSTER_DIR:-/tmp/gpucomm-cluster}
ONE_NODE_STATE=${GPUCOMM_SLURM_DIR:-/tmp/gpucomm-slurm}   # .ci/slurm-up.sh's
SLURM_LOCK=${GPUCOMM_CLUSTER_LOCK:-/tmp/gpucomm-slurm-ci.lock}  # taken by all four up/down scripts
CONF=$STATE/slurm.conf
NAMES=${GPUCOMM_CLUSTER_NAMES:-gc}
NET=${GPUCOMM_CLUSTER_NET:-10.77.0}
NETMODE=${GPUCOMM_CLUSTER_NETMODE:-netns}
CTL_ADDR=$NET.254
CTL_NAME=${NAMES}ctl
CTL_PORT=${GPUCOMM_CLUSTER_PORT:-6917}
SLURMD_PORT=$((CTL_PORT + 1))
SLURM_ROOT=${GPUCOMM_SLURM_ROOT:-}
MUNGE_DIR=${GPUCOMM_CLUSTER_MUNGE:-}
export SLURM_CONF=$CONF

# the daemons: Debian's, installed in /usr/sbin, or unpacked into $SLURM_ROOT, run through their
# wrappers (slurmd is told where slurmstepd is, its built-in path being /usr/sbin's)
if [ -n "$SLURM_ROOT" ]; then
    SLURMCTLD=$SLURM_ROOT/wrap/slurmctld
    SLURMD="$SLURM_ROOT/wrap/slurmd -d $SLURM_ROOT/wrap/slurmstepd"
    SLURM_PLUGINS=$SLURM_ROOT/usr/lib/x86_64-linux-gnu/slurm-wlm
    export PATH="$SLURM_ROOT/wrap:$PATH"
else
    SLURMCTLD=/usr/sbin/slurmctld
    SLURMD=/usr/sbin/slurmd
fi

lock_slurm() {  # lock_slurm WHO: wait (up to 10 min) until no other up/down script runs
    [ -n "${GPUCOMM_SLURM_LOCK_HELD:-}" ] && return 0   # a child of the holder (cluster-up's trap)
    exec 9>>"$SLURM_LOCK"
    flock -w 600 9 || { echo "$1: another Slurm up/down script holds $SLURM_LOCK" >&2; exit 1; }
    export GPUCOMM_SLURM_LOCK_HELD=1
}

alive() {  # alive PIDFILE: whether the process of a pid file runs
    [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

node_name() { echo "${NAMES}n$1"; }
node_addr() { echo "$NET.$((10 + $1))"; }
node_port() { echo "$((SLURMD_PORT + $1 - 1))"; }   # host network mode: one port per node

record() {  # record KIND NAME: something cluster-up.sh created, for cluster-down.sh
    echo "$1 $2" >>"$STATE/created"
}

start_slurmd() {  # start_slurmd NAME: the node's slurmd in its netns, own hostname and /etc/hosts
    local n=$1 netns=()
    mkdir -p "$STATE/spool/$n"
    # nsenter, not `ip netns exec`: that one remounts /sys, hiding the cgroup mounts slurmd needs
    [ "$NETMODE" = netns ] && netns=(nsenter --net="/run/netns/$n" --)
    "${netns[@]}" unshare --uts --mount --propagation private -- sh -c \
        "mount --bind '$STATE/hosts' /etc/hosts && hostname '$n' && exec $SLURMD -f '$CONF' -N '$n'" 9>&-  # not the up/down lock
    if [ "$NETMODE" = host ]; then  # no netns to find its processes by: its UTS namespace
        record_uts "$STATE/pids/slurmd.$n.pid"
    fi
}

record_uts() {  # record_uts PIDFILE: the UTS namespace of a daemon just started (host mode)
    local pid
    for _ in $(seq 50); do [ -s "$1" ] && break; sleep 0.1; done
    pid=$(cat "$1" 2>/dev/null) && record uts "$(readlink "/proc/$pid/ns/uts")"
}

stop_pidfile() {  # stop_pidfile FILE WHAT: SIGTERM, up to 10 s, SIGKILL; remove the file
    local pidfile=$1 what=$2 pid
    [ -s "$pidfile" ] || return 0
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
        echo "cluster: stopped $what (pid $pid)"
    fi
    rm -f "$pidfile"
}

uts_pids() {  # uts_pids NS: the processes in UTS namespace NS ("uts:[4026532301]")
    local p
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/ns/uts" 2>/dev/null)" = "$1" ] && echo "${p#/proc/}"
    done
    return 0
}

shape() {  # shape DEV RATE [NETNS]: token bucket on DEV's egress (replaces what was there)
    local dev=$1 rate=$2 ns=${3:-}
    local tc=(tc); [ -n "$ns" ] && tc=(ip netns exec "$ns" tc)
    "${tc[@]}" qdisc replace dev "$dev" root tbf rate "$rate" burst 64kb latency 200ms
}

unshape() {  # unshape DEV [NETNS]
    local dev=$1 ns=${2:-}
    local tc=(tc); [ -n "$ns" ] && tc=(ip netns exec "$ns" tc)
    "${tc[@]}" qdisc del dev "$dev" root 2>/dev/null || true
}
