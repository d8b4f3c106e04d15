#!/bin/bash
# Issue 22, the nvshmem method on nvidia-h200-x2, one device call (from the repository root,
# .whl/ present): build the kernels, a smoke run, then under ReFrame the ping-pong of nvshmem and
# ccl (8 B..1 GiB, same node, same call), nvshmem all-to-all and all-reduce, the health mode
# (timed), then the payload's bw and the path / block variants at large sizes.
# Usage: bench/h200x2-nvshmem.sh OUT   (results: bench/results/<date>-nvidia-h200-x2/NN-nvshmem/)
OUT=${1:?usage: bench/h200x2-nvshmem.sh OUT}
source bench/device-env.sh
set -o pipefail
step() { echo; echo "=== $(date +%T) $*"; }
MPI="mpirun -np 2 --oversubscribe"
step node; nvidia-smi --query-gpu=index,name,pci.bus_id --format=csv,noheader; nvidia-smi topo -m | head -4
python3 -c "import importlib.util as u; print('nvidia ->', list(u.find_spec('nvidia').submodule_search_locations))"
python3 -m pip show nvidia-nvshmem-cu13 cupy-cuda13x 2>/dev/null | grep -E '^(Name|Version)'
env | grep -E '^(NVSHMEM|NCCL_NVLS|TORCH_SYMM)' | sort
step build; t0=$(date +%s.%N)
timeout 200 python3 -m gpucomm.payload.nvshmem.build sm_90; echo "build rc=$? in $(python3 -c "print(round($(date +%s.%N)-$t0,1))") s"
step smoke; timeout 60 $MPI python3 -m gpucomm pingpong --method nvshmem --sizes 8,1M,1G --timeout 50
step reframe ping-pong nvshmem and ccl, all-to-all and all-reduce nvshmem
timeout 150 reframe -C config/settings.py -c checks/pingpong.py -c checks/collectives.py \
    -n 'PingPongCheck %method=(nvshmem|ccl)' -n 'AllToAllCheck %method=nvshmem' -n 'AllReduceCheck %method=nvshmem' \
    -r --report-file "$OUT/report-checks.json" 2>&1 | grep -vE '^\[ *(OK|RUN) *\]' | tail -60
step health mode; t0=$(date +%s.%N)
timeout 100 reframe -C config/settings.py -c checks/ --mode health -r --report-file "$OUT/report-health.json" 2>&1 | tail -40
echo "health mode wall $(python3 -c "print(round($(date +%s.%N)-$t0,1))") s"
step bw; timeout 40 $MPI python3 -m gpucomm bw --method nvshmem --sizes 8,4K,1M,64M,1G --timeout 35 --json "$OUT/bw.json"
for v in "GPUCOMM_NVSHMEM_PATH=kernel" "GPUCOMM_NVSHMEM_PATH=stream" \
         "GPUCOMM_NVSHMEM_PATH=kernel GPUCOMM_NVSHMEM_BLOCKS=64" "GPUCOMM_NVSHMEM_PATH=kernel GPUCOMM_NVSHMEM_BLOCKS=132"; do
    step "pingpong $v"
    env $v timeout 25 $MPI python3 -m gpucomm pingpong --method nvshmem \
        --sizes 1M,16M,64M,1G --timeout 20 | grep -vE '^GPUCOMM-'
done
step keep; tar czf "$OUT/outputs.tgz" $(find output -name 'gpucomm_results*.json' -o -name 'rfm_job.out' | head -400) 2>/dev/null
ls -la "$OUT"
