#!/usr/bin/env bash
# Issue 8 on a 2-GPU node: what the timing changes do (CUDA graph of each sample for ccl,
# persistent MPI requests, batched samples), the multi-method sweep, and the health mode's wall
# time under ReFrame.  Usage (repository root, after `source bench/device-env.sh`):
#   bench/h200x2-engine.sh OUTDIR        -> OUTDIR/engine.log, OUTDIR/raw.tgz
out=${1:?outdir}; mkdir -p "$out/raw"
py=$(command -v python3)
ucx=$(python3 -c "import libucx,os;print(os.path.join(os.path.dirname(libucx.__file__),'lib'))")
UCX="--mca pml ucx -x LD_PRELOAD=$ucx/libucs.so.0:$ucx/libucm.so.0:$ucx/libuct.so.0:$ucx/libucp.so.0 -x UCX_MODULE_DIR=$ucx/ucx"
rfm="$py $(command -v reframe) -C config/settings.py"
ms() { date +%s%N | cut -b1-13; }
run() {  # NAME ARGS...: one payload launch, its table in the log, raw output kept
  local name=$1; shift
  echo "=== $name: $*"
  local t0=$(ms)
  timeout 60 "$@" > "$out/raw/$name.txt" 2>&1; local rc=$?
  grep -v GPUCOMM-RESULT "$out/raw/$name.txt"
  echo "rc=$rc wall_ms=$(( $(ms) - t0 ))"
}
{
nvidia-smi topo -m
for r in 1 2 3; do
  for g in on off; do
    run ccl-pingpong-graph-$g-$r mpirun -np 2 $UCX $py -m gpucomm pingpong --method ccl --graph $g --sizes 8,1M,64M,256M,1G
  done
done
for g in on off; do
  run ccl-allreduce-graph-$g mpirun -np 2 $UCX $py -m gpucomm allreduce --method ccl --graph $g --sizes 8,1M,64M,1G
done
for r in 1 2 3; do
  for p in 1 0; do
    run host-pingpong-persistent$p-ob1-$r env GPUCOMM_MPI_PERSISTENT=$p mpirun -np 2 $py -m gpucomm pingpong --method host --sizes 8,1K,64K
    run host-pingpong-persistent$p-ucx-$r env GPUCOMM_MPI_PERSISTENT=$p mpirun -np 2 $UCX $py -m gpucomm pingpong --method host --sizes 8,1K,64K
  done
done
for p in 1 0; do
  run gpu-aware-pingpong-persistent$p env GPUCOMM_MPI_PERSISTENT=$p mpirun -np 2 $UCX $py -m gpucomm pingpong --method gpu-aware-mpi --sizes 8,1M,64M,1G
done
run sweep-pingpong-all mpirun -np 2 $UCX $py -m gpucomm pingpong --method all --sizes 8,1M,64M --budget 0.25 --warmup 2
for k in 1 2; do
  echo "=== reframe --mode health ($k)"
  t0=$(ms)
  $rfm -c checks/ --mode health -r --report-file "$out/raw/report-health-$k.json" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | grep -E "OK|FAIL|SKIP|PASSED|FAILED|P: |error"
  echo "WALL health $k: $(( $(ms) - t0 )) ms"
done
echo "=== per-method checks, 4 sizes, 0.5 s budget"
t0=$(ms)
$rfm -c checks/ -r -n 'PingPongCheck|AllReduceCheck|AllToAllCheck' -S sizes=8,1M,64M,1G -S budget=0.5 \
    --report-file "$out/raw/report-permethod.json" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | grep -E "OK|FAIL|SKIP|PASSED|FAILED|P: |error"
echo "WALL per-method: $(( $(ms) - t0 )) ms"
} 2>&1 | tee "$out/engine.log"
cp -r output "$out/" 2>/dev/null; tar czf "$out/raw.tgz" -C "$out" raw output && rm -rf "$out/raw" "$out/output"
