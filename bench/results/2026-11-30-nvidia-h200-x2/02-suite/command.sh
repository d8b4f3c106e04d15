#!/usr/bin/env bash
# The intra-node suite on a 2-GPU node, as committed under bench/results/: ccl timer
# comparison, the full ReFrame run (ping-pong + collectives, every method, 1 B/8 B..1 GiB),
# and what the wheel's Open MPI + UCX does with collectives on device buffers.
# Usage (repository root, after `source bench/device-env.sh`): bench/h200x2-suite.sh OUTDIR
out=${1:?outdir}; mkdir -p "$out"
py=$(command -v python3)
ucx=$(python3 -c "import libucx,os;print(os.path.join(os.path.dirname(libucx.__file__),'lib'))")
UCX="--mca pml ucx -x LD_PRELOAD=$ucx/libucs.so.0:$ucx/libucm.so.0:$ucx/libuct.so.0:$ucx/libucp.so.0 -x UCX_MODULE_DIR=$ucx/ucx"
nvidia-smi topo -m > "$out/topo.txt" 2>&1
echo "=== ccl ping-pong: host timer vs device events (3 runs each)"
for t in host device host device host device; do
  mpirun -np 2 $py -m gpucomm pingpong --method ccl --timer $t --sizes 8,1K,1M --quiet 2>&1 \
    | python3 -c "import sys,json; [print('$t', r['size'], round(r['time_us']['median'],2), round(r['time_us']['p05'],2), round(r['time_us']['p95'],2)) for r in (json.loads(l.split(' ',1)[1]) for l in sys.stdin if l.startswith('GPUCOMM-RESULT'))]"
done
echo "=== ReFrame: all checks"
start=$(date +%s)
python3 "$(command -v reframe)" -C config/settings.py -c checks/ -r --report-file "$out/report.json" 2>&1 | tee "$out/reframe.log"
echo "reframe wall: $(( $(date +%s) - start )) s"
tar czf "$out/outputs.tgz" output/ 2>/dev/null
echo "=== gpu-aware-mpi collectives forced (GPUCOMM_GPU_AWARE_MPI=1) under the wheel's Open MPI + UCX"
for op in alltoall allreduce; do
  timeout 120 mpirun -np 2 $UCX -x GPUCOMM_GPU_AWARE_MPI=1 $py -m gpucomm $op --method gpu-aware-mpi --sizes 8,1M --iters 5 2>&1 | tail -4
  echo "rc=$?"
done
