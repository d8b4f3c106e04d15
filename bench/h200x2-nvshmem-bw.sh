#!/bin/bash
# Issues 22 and 21 on nvidia-h200-x2 in one device call, from the repository root:
#   nvshmem (issue 22): build the kernels, then under ReFrame the ping-pong of nvshmem and ccl
#   (same node, same call), nvshmem all-to-all and all-reduce; the health mode, timed;
#   issue 21: BwCheck (every method) under ReFrame, bench/compare's host pair (compiled loop vs
#   osu_latency); then nvshmem's bw and path variants with what time is left.
# Usage: GPUCOMM_WHEELS=DIR bench/h200x2-nvshmem-bw.sh OUT   (TOOLS=ext/tools.tar.xz for OSU)
OUT=${1:?usage: bench/h200x2-nvshmem-bw.sh OUT}
source bench/device-env.sh
set -o pipefail
T0=$(date +%s)
step() { echo; echo "=== $(date +%T) [+$(( $(date +%s) - T0 )) s] $*"; }
left() { [ $(( $(date +%s) - T0 )) -lt "$1" ]; }
MPI="mpirun -np 2 --oversubscribe"
RFM="reframe -C config/settings.py"
step node; nvidia-smi --query-gpu=index,name,pci.bus_id --format=csv,noheader
python3 -m pip show nvidia-nvshmem-cu13 numba numba-mpi cupy-cuda13x 2>/dev/null | grep -E '^(Name|Version)'
env | grep -E '^(NVSHMEM|NCCL_NVLS|TORCH_SYMM)' | sort
step nvshmem build; timeout 150 python3 -m gpucomm.payload.nvshmem.build sm_90; echo "build rc=$?"
step probe; timeout 90 python3 -m gpucomm probe 2>&1 | tail -30
step reframe nvshmem and ccl ping-pong, nvshmem all-to-all and all-reduce
# ReFrame's own parameter syntax (Name%param=value, no space): '^PingPongCheck %method=...' selects nothing
timeout 170 $RFM -c checks/pingpong.py -c checks/collectives.py \
    -n 'PingPongCheck%method=nvshmem' -n 'PingPongCheck%method=ccl' -n 'AllToAllCheck%method=nvshmem' \
    -n 'AllReduceCheck%method=nvshmem' -r --report-file "$OUT/report-nvshmem.json" 2>&1 | tee "$OUT/nvshmem.log" \
    | grep -vE '^\[ *(OK|RUN) *\]' | tail -50
grep -q 'Ran 0/0' "$OUT/nvshmem.log" && echo "h200x2-nvshmem-bw: the selection chose no check" >&2
step health mode; t1=$(date +%s.%N)
timeout 100 $RFM -c checks/ --mode health -r --report-file "$OUT/report-health.json" 2>&1 | tail -30
echo "health mode wall $(python3 -c "print(round($(date +%s.%N)-$t1,1))") s"
step reframe BwCheck, every method
timeout 130 $RFM -c checks/bw.py -r --report-file "$OUT/report-bw.json" 2>&1 | grep -vE '^\[ *(OK|RUN) *\]' | tail -40
step compare host pair
d=/tmp/gpucomm-tools; mkdir -p $d && tar xJf "${TOOLS:-ext/tools.tar.xz}" -C $d && \
    export GPUCOMM_OSU_DIR=$d/osu GPUCOMM_NCCL_TESTS_DIR=$d/nccl-tests LD_LIBRARY_PATH=$d/lib:$LD_LIBRARY_PATH
timeout 80 bench/compare --only host --sizes 8 --iters 20000 --warmup 2000 --repeats 3 --out "$OUT/compare-host" 2>&1 | tail -20
if left 430; then step nvshmem bw; timeout 30 $MPI python3 -m gpucomm bw --method nvshmem --sizes 8,1M,64M,1G --timeout 25 | grep -vE '^GPUCOMM-'; fi
for v in "GPUCOMM_NVSHMEM_PATH=kernel" "GPUCOMM_NVSHMEM_PATH=stream"; do
    left 470 || break
    step "pingpong $v"; env $v timeout 25 $MPI python3 -m gpucomm pingpong --method nvshmem --sizes 8,1M,64M,1G --timeout 20 | grep -vE '^GPUCOMM-'
done
step keep; tar czf "$OUT/outputs.tgz" $(find output -name 'gpucomm_results*.json' -o -name 'rfm_job.out' -o -name 'rfm_job.err' | head -600) 2>/dev/null
ls -la "$OUT"
