# shellcheck shell=bash
# Shared by .ci/slurm-up.sh and .ci/cluster-up.sh: a working munged for Slurm.  Sourced, not run.

# ensure_munged PIDCOPY: reuse a munged that answers, else start one (the Debian package's key,
# or a new one; munged refuses to run as root) and copy its pid file to PIDCOPY, so that the
# caller's down script stops only a munged it started.  Needs the caller's log().
ensure_munged() {
    install -d -o munge -g munge -m 0755 /run/munge
    if [ ! -s /etc/munge/munge.key ]; then
        /usr/sbin/mungekey --create --keyfile=/etc/munge/munge.key
        chown munge:munge /etc/munge/munge.key
        chmod 0400 /etc/munge/munge.key
    fi
    if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
        log "starting munged"
        rm -f /run/munge/munged.pid
        runuser -u munge -- /usr/sbin/munged 9>&-  # daemons never hold the up/down lock
        # munged writes its pid file as the munge user
        for _ in $(seq 50); do [ -s /run/munge/munged.pid ] && break; sleep 0.1; done
        cp /run/munge/munged.pid "$1"
    fi
    munge -n | unmunge >/dev/null || { log "munge does not work" >&2; return 1; }
}
