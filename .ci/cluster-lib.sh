# shellcheck shell=bash
# Shared by .ci/cluster-up.sh, .ci/cluster-down.sh and .ci/cluster-ctl.sh: names, addresses and
# the start of one node's slurmd inside its namespaces.  Sourced, not run.
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

STATE=${GPUCOMM_CLUSTER_DIR:-/tmp/gpucomm-cluster}
ONE_NODE_STATE=${GPUCOMM_SLURM_DIR:-/tmp/gpucomm-slurm}   # .ci/slurm-up.sh's
SLURM_LOCK=/tmp/gpucomm-slurm-ci.lock                     # taken by all four up/down scripts
CONF=$STATE/slurm.conf
NET=10.77.0
CTL_ADDR=$NET.254
CTL_NAME=gcctl
CTL_PORT=6917
SLURMD_PORT=6918
export SLURM_CONF=$CONF

lock_slurm() {  # lock_slurm WHO: wait (up to 10 min) until no other up/down script runs
    [ -n "${GPUCOMM_SLURM_LOCK_HELD:-}" ] && return 0   # a child of the holder (cluster-up's trap)
    exec 9>>"$SLURM_LOCK"
    flock -w 600 9 || { echo "$1: another Slurm up/down script holds $SLURM_LOCK" >&2; exit 1; }
    export GPUCOMM_SLURM_LOCK_HELD=1
}

alive() {  # alive PIDFILE: whether the process of a pid file runs
    [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

node_name() { echo "gcn$1"; }
node_addr() { echo "$NET.$((10 + $1))"; }

record() {  # record KIND NAME: something cluster-up.sh created, for cluster-down.sh
    echo "$1 $2" >>"$STATE/created"
}

start_slurmd() {  # start_slurmd NAME: the node's slurmd in its netns, own hostname and /etc/hosts
    local n=$1
    mkdir -p "$STATE/spool/$n"
    # nsenter, not `ip netns exec`: that one remounts /sys, hiding the cgroup mounts slurmd needs
    nsenter --net="/run/netns/$n" -- unshare --uts --mount --propagation private -- sh -c \
        "mount --bind '$STATE/hosts' /etc/hosts && hostname '$n' && exec /usr/sbin/slurmd -f '$CONF' -N '$n'" 9>&-  # not the up/down lock
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
