# gpucomm noise job: start the aggressor and wait until its load is on (rfm/noise.py writes
# this into the job script, after the job's gpucomm_start: the aggressor's launch in the
# background, its pid in $gpucomm_aggressor).
#
#   gpucomm_aggressor_up READY_FILE ERR_FILE TIMEOUT STARTS ERROR_PREFIX
#
# starts the aggressor and returns once READY_FILE exists.  An aggressor that exits, or has
# not written READY_FILE within TIMEOUT s, is killed and started again, its stderr ERR_FILE
# kept as ERR_FILE.<attempt> and each new attempt named on stdout, up to STARTS attempts in
# all; then one "ERROR_PREFIX the aggressor did not start ..." line goes to stderr and the job
# ends (exit 1).
gpucomm_ready() {  # READY_FILE TIMEOUT: 0 once the file exists; 1 if the aggressor is gone or
    # TIMEOUT passed, gpucomm_why then saying which and after how long (bash's SECONDS)
    gpucomm_t0=$SECONDS
    while [ ! -e "$1" ]; do
        if ! kill -0 "$gpucomm_aggressor" 2>/dev/null; then
            gpucomm_why="it exited after $((SECONDS - gpucomm_t0)) s"
            return 1
        fi
        if [ $((SECONDS - gpucomm_t0)) -ge "$2" ]; then
            gpucomm_why="no load within $2 s"
            return 1
        fi
        sleep 1
    done
}
gpucomm_aggressor_up() {
    gpucomm_n=1
    gpucomm_start
    until gpucomm_ready "$1" "$3"; do
        kill "$gpucomm_aggressor" 2>/dev/null
        wait "$gpucomm_aggressor" 2>/dev/null
        if [ "$gpucomm_n" -ge "$4" ]; then
            echo "$5 the aggressor did not start its load: $gpucomm_why, attempt $gpucomm_n of $4 (see $2)" >&2
            exit 1
        fi
        mv "$2" "$2.$gpucomm_n"
        gpucomm_n=$((gpucomm_n + 1))
        echo "gpucomm: the aggressor did not start its load ($gpucomm_why): attempt $gpucomm_n"
        gpucomm_start
    done
}
