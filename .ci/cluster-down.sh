#!/usr/bin/env bash
# Stop and delete what .ci/cluster-up.sh made, and only that: the slurmd of every node and
# slurmctld (and munged where cluster-up.sh started it) by their pid files in $STATE/pids, any
# process left in a node namespace (job steps of a killed slurmd), then the namespaces, veths and
# bridges it recorded in $STATE/created, newest first.  Works after a partial start-up; a second
# call finds nothing to do.  Always exits 0.  Names, binaries and munged: .ci/cluster-lib.sh's
# environment, as cluster-up.sh had it (in the host network mode the nodes' processes are found
# by the UTS namespaces it recorded).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cluster-lib.sh
. "$HERE/cluster-lib.sh"

[ -d "$STATE" ] || exit 0
lock_slurm cluster-down
for pidfile in "$STATE"/pids/slurmd.*.pid; do
    [ -e "$pidfile" ] || continue
    stop_pidfile "$pidfile" "$(basename "$pidfile" .pid)"
done
# processes still in our node namespaces: job steps and tasks orphaned by a killed slurmd
if [ -s "$STATE/created" ]; then
    for n in $(awk '$1 == "netns" {print $2}' "$STATE/created"); do
        pids=$(ip netns pids "$n" 2>/dev/null || true)
        if [ -n "$pids" ]; then
            echo "cluster-down: killing what is left in netns $n: $(echo $pids)"
            # shellcheck disable=SC2086
            kill -9 $pids 2>/dev/null || true
        fi
    done
    for ns in $(awk '$1 == "uts" {print $2}' "$STATE/created"); do
        pids=$(uts_pids "$ns")
        if [ -n "$pids" ]; then
            echo "cluster-down: killing what is left in $ns: $(echo $pids)"
            # shellcheck disable=SC2086
            kill -9 $pids 2>/dev/null || true
        fi
    done
fi
stop_pidfile "$STATE/pids/slurmctld.pid" slurmctld
if [ -z "$MUNGE_DIR" ] && [ -s "$STATE/pids/munged.pid" ] && alive "$ONE_NODE_STATE/slurmctld.pid"; then
    # the one-node cluster still runs on our munged: it owns it now (slurm-down.sh stops it)
    mv "$STATE/pids/munged.pid" "$ONE_NODE_STATE/munged.pid"
    echo "cluster-down: munged left to the one-node cluster ($ONE_NODE_STATE)"
fi
stop_pidfile "$STATE/pids/munged.pid" munged

if [ -s "$STATE/created" ]; then
    tac "$STATE/created" | while read -r kind name; do
        case $kind in
            netns) ip netns del "$name" 2>/dev/null && echo "cluster-down: deleted netns $name" ;;
            link) ip link del "$name" 2>/dev/null && echo "cluster-down: deleted link $name" ;;
            cgroup)  # the cgroup slurmd needed: the nodes' scopes inside it first (empty now)
                find "$name" -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null
                rmdir "$name" 2>/dev/null && echo "cluster-down: deleted cgroup $name" ;;
        esac
    done
    : >"$STATE/created"
fi
exit 0
