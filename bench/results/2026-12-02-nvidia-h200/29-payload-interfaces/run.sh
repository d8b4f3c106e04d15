#!/usr/bin/env bash
# Issue 29's device check on one GPU (kind nvidia-h200): after the payload's refactor (declared
# run context, declared Method/Operation hooks, the engine split), every method the one GPU can
# run straight under mpirun (two ranks on the GPU: --allow-shared-gpu; ccl with a host identity
# per rank, NCCL_HOSTID, else NCCL stops with "Duplicate GPU"), the engine-overhead test, and
# ReFrame's default and health runs.  From the repository root, with .whl carried:
#   bash bench/results/2026-12-02-nvidia-h200/29-payload-interfaces/run.sh OUT
set -uo pipefail
OUT=${1:?OUT}
mkdir -p "$OUT"
t0=$SECONDS
phase() { echo; echo "=== $* (t=$((SECONDS - t0)) s)"; }
phase environment
nvidia-smi -L; git log -1 --format='commit %H %s' 2>/dev/null || true
source bench/device-env.sh || exit 1
python3 -c 'import cupy, mpi4py, reframe; print("cupy", cupy.__version__, "mpi4py", mpi4py.__version__, "reframe", reframe.VERSION)'
python3 -m gpucomm probe 2>&1 | tail -5
SIZES=8,1M,64M
run() {  # run NAME OP METHOD [extra args]: two ranks on the one GPU, records to OUT/NAME.json
    local name=$1 op=$2 m=$3; shift 3
    local s=$SECONDS rc
    timeout 180 mpirun -np 2 --bind-to none bash -c \
        'NCCL_HOSTID=gcn$OMPI_COMM_WORLD_RANK exec python3 -m gpucomm "$@"' _ \
        "$op" --method "$m" --sizes $SIZES --allow-shared-gpu --timeout 150 \
        --json "$OUT/$name.json" "$@" >"$OUT/$name.log" 2>&1
    rc=$?
    echo "--- $name: rc $rc, $((SECONDS - s)) s"
    grep -v '^GPUCOMM-' "$OUT/$name.log" | tail -n 12
}
phase "payload straight under mpirun, two ranks on the one GPU"
for m in host staging gpu-aware-mpi ipc-copy ccl nvshmem; do run "pingpong-$m" pingpong "$m"; done
for m in host staging ccl; do run "allreduce-$m" allreduce "$m"; run "alltoall-$m" alltoall "$m"; done
phase "engine overhead (tests/payload/test_overhead.py)"
python3 -m pytest -q -p no:cacheprovider -n0 tests/payload/test_overhead.py 2>&1 | tail -n 5
phase "ReFrame, default mode"
reframe -C config/settings.py -c checks/ -r --report-file "$OUT/default.json" >"$OUT/default.log" 2>&1
echo "rc $?"; grep -E '^\[ *(OK|FAIL|SKIP|PASSED|FAILED)|PASSED|FAILED' "$OUT/default.log" | tail -n 30
phase "ReFrame, health mode"
reframe -C config/settings.py -c checks/ --mode health -r --report-file "$OUT/health.json" >"$OUT/health.log" 2>&1
echo "rc $?"; grep -E 'PASSED|FAILED|SKIP|FAIL ' "$OUT/health.log" | tail -n 30
phase "report"
python3 -m gpucomm report "$OUT/default.json" "$OUT/health.json" -o "$OUT/report" 2>&1 | tail -n 5
cat "$OUT/report/health.txt" 2>/dev/null | head -n 40
(cd "$OUT" && tar czf records.tgz *.json *.log report 2>/dev/null && rm -rf report *.json pingpong-*.log allreduce-*.log alltoall-*.log)
phase "done"
