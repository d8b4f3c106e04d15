#!/usr/bin/env bash
# Issue 9 on a 2-GPU node: the pair matrix of every GPU method, then each injected fault under
# ReFrame, which must FAIL (never PASS, never hang) with its reason.
# Usage (repository root, after `source bench/device-env.sh`): bench/h200x2-faults.sh OUTDIR
out=${1:?outdir}; mkdir -p "$out"
py=$(command -v python3)
rfm="$py $(command -v reframe) -C config/settings.py"
ms() { date +%s%N | cut -b1-13; }
rf() {  # NAME ENV... -- REFRAME ARGS: one ReFrame session, its verdicts and reasons in the log
  local name=$1; shift; local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  echo "=== $name: ${envs[*]} reframe $*"
  local t0=$(ms)
  env "${envs[@]}" timeout -k 5 150 $rfm "$@" -S time_limit=100s --report-file "$out/report-$name.json" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' \
    | grep -E "^\[ +(OK|FAIL|SKIP)|PASSED|FAILED|P: |FAILURE INFO|^ *\* Reason|reason:|error|Error|expected|below|above|outside|rank" | head -60
  echo "rc=${PIPESTATUS[0]} wall_ms=$(( $(ms) - t0 ))"
}
{
rf pairmatrix -- -c checks/pairmatrix.py -r -S sizes=8,1M,256M,1G --performance-report
rf nop2p-ccl NCCL_P2P_DISABLE=1 -- -c checks/pairmatrix.py -c checks/pingpong.py -n 'PairMatrixCheck%method=ccl|PingPongCheck%method=ccl' -r -S sizes=8,1M,256M,1G
rf ipc-refused GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1 -- -c checks/pairmatrix.py -n 'PairMatrixCheck%method=ipc-copy' -r -S "python=$PWD/config/bin/gpucomm-bind $py"
rf shared-gpu CUDA_VISIBLE_DEVICES=0 -- -c checks/pairmatrix.py -n 'PairMatrixCheck%method=ccl' -r
rf corrupt GPUCOMM_TEST_CORRUPT=1:1048576 -- -c checks/pairmatrix.py -n 'PairMatrixCheck%method=ccl' -r
rf killed-rank GPUCOMM_TEST_HANG=1:1048576 GPUCOMM_TEST_HANG_EXIT=1 -- -c checks/pingpong.py -n 'PingPongCheck%method=ccl' -r -S sizes=8,1M
echo "=== gpu-aware-mpi on an MPI without GPU support (no UCX): refused before any call"
timeout 60 mpirun -np 2 $py -m gpucomm pair-matrix --method gpu-aware-mpi --sizes 8 2>&1 | grep -v "^GPUCOMM-RESULT" | tail -4
} 2>&1 | tee "$out/faults.log"
