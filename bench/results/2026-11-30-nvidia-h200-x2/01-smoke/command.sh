#!/usr/bin/env bash
# Every method's ping-pong straight under mpirun (no ReFrame) on a 2-GPU node, plus the
# capability probes: what GPU-aware detection says with and without UCX, and that a
# non-GPU-aware MPI is refused instead of crashing.  Usage: bench/smoke-gpu.sh OUTDIR
out=${1:?outdir}
mkdir -p "$out"
py=$(command -v python3)
ucx=$(python3 -c "import libucx,os;print(os.path.join(os.path.dirname(libucx.__file__),'lib'))")
UCX="--mca pml ucx -x LD_PRELOAD=$ucx/libucs.so.0:$ucx/libucm.so.0:$ucx/libuct.so.0:$ucx/libucp.so.0 -x UCX_MODULE_DIR=$ucx/ucx"
sizes=${SIZES:-8,1M,64M,1G}
nvidia-smi topo -m > "$out/topo.txt" 2>&1
python3 -m gpucomm probe > "$out/probe.json" 2>&1; cat "$out/probe.json"
for m in host staging ipc-copy ccl; do
  echo "=== $m"; timeout 300 mpirun -np 2 $py -m gpucomm pingpong --method $m --sizes $sizes 2>&1 | grep -v RESULT
  echo "rc=$?"
done
echo "=== gpu-aware-mpi, UCX, detection by heuristics only"
timeout 300 mpirun -np 2 $UCX $py -m gpucomm pingpong --method gpu-aware-mpi --sizes $sizes 2>&1 | grep -v RESULT
echo "=== gpu-aware-mpi, plain Open MPI (must be refused, no segfault)"
timeout 120 mpirun -np 2 $py -m gpucomm pingpong --method gpu-aware-mpi --sizes 8 2>&1 | tail -3
echo "=== host under UCX"
timeout 120 mpirun -np 2 $UCX $py -m gpucomm pingpong --method host --sizes 8,1M 2>&1 | grep -v RESULT
echo "=== one GPU for two ranks (must be refused)"
CUDA_VISIBLE_DEVICES=0 timeout 120 mpirun -np 2 $py -m gpucomm pingpong --method ccl --sizes 8 2>&1 | tail -2
