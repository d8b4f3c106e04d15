#!/usr/bin/env bash
# Stop what .ci/slurm-up.sh started: slurmd, slurmctld and munged, by the pid files it
# recorded in $GPUCOMM_SLURM_DIR (default /tmp/gpucomm-slurm); restore /etc/slurm/slurm.conf.
# Daemons it did not start (no pid file) are left alone.  Always exits 0.
set -u

STATE=${GPUCOMM_SLURM_DIR:-/tmp/gpucomm-slurm}
CONF=/etc/slurm/slurm.conf
MARK="# written by gpucomm .ci/slurm-up.sh"

stop() {  # stop NAME: SIGTERM the pid in $STATE/NAME.pid, wait up to 10 s, then SIGKILL
    local pidfile="$STATE/$1.pid" pid
    [ -s "$pidfile" ] || return 0
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
        echo "slurm-down: stopped $1 (pid $pid)"
    fi
    rm -f "$pidfile"
}

# no other up/down script at once (.ci/cluster-lib.sh's lock)
if [ -z "${GPUCOMM_SLURM_LOCK_HELD:-}" ]; then
    exec 9>>/tmp/gpucomm-slurm-ci.lock
    flock -w 600 9 || echo "slurm-down: waited 10 min for the Slurm lock; going on" >&2
fi

stop slurmd
stop slurmctld
CLUSTER_PIDS=${GPUCOMM_CLUSTER_DIR:-/tmp/gpucomm-cluster}/pids
if [ -s "$STATE/munged.pid" ] && [ -s "$CLUSTER_PIDS/slurmctld.pid" ] &&
        kill -0 "$(cat "$CLUSTER_PIDS/slurmctld.pid")" 2>/dev/null; then
    # the 4-node cluster of .ci/cluster-up.sh still runs on our munged: it owns it now
    mv "$STATE/munged.pid" "$CLUSTER_PIDS/munged.pid"
    echo "slurm-down: munged left to the 4-node cluster"
fi
stop munged

if [ -f "$CONF" ] && head -n1 "$CONF" | grep -qF "$MARK"; then
    if [ -f "$STATE/slurm.conf.orig" ]; then
        mv "$STATE/slurm.conf.orig" "$CONF"
    else
        rm -f "$CONF"
    fi
fi
exit 0
