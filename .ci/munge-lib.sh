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

# private_munged DIR PIDCOPY: a munged of the cluster's own, as root (a machine without a munge
# user), every file in DIR (key, socket, pid, log, seed: munged's built-in paths are /etc, /run
# and /var's); its pid file copied to PIDCOPY.  munged wants the socket's folder searchable by
# all (0755); where it refuses the folders around the others it is started again with --force.
# Slurm finds the socket through AuthInfo=socket=DIR/munge.socket.  Needs the caller's log().
private_munged() {
    # the programs of GPUCOMM_SLURM_ROOT's packages where they were unpacked (cluster-lib.sh)
    local dir=$1 sbin=${SLURM_ROOT:+$SLURM_ROOT/wrap} bin=${SLURM_ROOT:+$SLURM_ROOT/wrap}
    sbin=${sbin:-/usr/sbin} bin=${bin:-/usr/bin}
    local opts=(--key-file="$dir/munge.key" --socket="$dir/munge.socket" --pid-file="$dir/munged.pid"
                --log-file="$dir/munged.log" --seed-file="$dir/munged.seed")
    install -d -m 0755 "$dir"
    [ -s "$dir/munge.key" ] || "$sbin/mungekey" --create --keyfile="$dir/munge.key"
    log "starting munged (socket $dir/munge.socket)"
    rm -f "$dir/munged.pid"
    if ! "$sbin/munged" "${opts[@]}" 9>&-; then
        log "munged refused: $(tail -n 1 "$dir/munged.log" 2>/dev/null); again with --force"
        "$sbin/munged" --force "${opts[@]}" 9>&-
    fi
    for _ in $(seq 50); do [ -s "$dir/munged.pid" ] && break; sleep 0.1; done
    cp "$dir/munged.pid" "$2"
    "$bin/munge" -n --socket="$dir/munge.socket" | "$bin/unmunge" --socket="$dir/munge.socket" >/dev/null ||
        { log "munge does not work (socket $dir/munge.socket)" >&2; return 1; }
}
