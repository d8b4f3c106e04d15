#!/usr/bin/env bash
# Faults and repairs on the cluster of .ci/cluster-up.sh (tests/test_cluster.py uses them):
#
#   bash .ci/cluster-ctl.sh kill-slurmd gcn3     # SIGKILL the node's slurmd (its job steps live on)
#   bash .ci/cluster-ctl.sh start-slurmd gcn3    # start it again (ReturnToService=2: back to idle)
#   bash .ci/cluster-ctl.sh degrade gcn4 5mbit   # token bucket on the node's own link, both ways
#   bash .ci/cluster-ctl.sh restore gcn4         # remove it
#
# Draining is Slurm's own: scontrol update nodename=gcn3 state=drain reason=...; state=resume.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cluster-lib.sh
. "$HERE/cluster-lib.sh"

cmd=${1:-} node=${2:-}
usage="usage: $0 kill-slurmd|start-slurmd|degrade|restore $(node_name I) [RATE]"
case $node in "$(node_name "")"[0-9]*) i=${node#"$(node_name "")"} ;; *) echo "$usage" >&2; exit 2 ;; esac
[ "$NETMODE" = host ] || ip netns list | grep -qw "$node" || { echo "cluster-ctl: no node $node (cluster not up?)" >&2; exit 1; }
pidfile=$STATE/pids/slurmd.$node.pid
case $cmd in
    kill-slurmd)
        pid=$(cat "$pidfile")
        kill -9 "$pid"
        echo "cluster-ctl: killed slurmd of $node (pid $pid)" ;;
    start-slurmd)
        if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
            echo "cluster-ctl: slurmd of $node runs already"
        else
            rm -f "$pidfile"
            start_slurmd "$node"
            echo "cluster-ctl: started slurmd of $node"
        fi ;;
    degrade)
        rate=${3:?rate, e.g. 5mbit}
        shape "${NAMES}v$i" "$rate"      # toward the node
        shape eth0 "$rate" "$node"       # from the node
        echo "cluster-ctl: link of $node limited to $rate" ;;
    restore)
        unshape "${NAMES}v$i"
        unshape eth0 "$node"
        echo "cluster-ctl: link of $node restored" ;;
    *) echo "$usage" >&2; exit 2 ;;
esac
