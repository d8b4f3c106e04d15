#!/bin/bash
# bench/build's MPI (ext/ompi-cuda.tar.xz: Open MPI 5.0.7 + the v5.0.x check_addr fix, UCX, UCC)
# on a GPU node, in one device call, from the repository root:
#   what it holds (ompi_info, ucc_info); the GPU-aware level the local config probes and the
#   candidate it takes; which UCC TL runs device and host collectives (UCC_COLL_TRACE);
#   gpu-aware-mpi all-reduce and all-to-all with and without coll/ucc; then
#   command-host-coll-latency.sh's variants (beside this script) (host collectives at 8 B, the wheel MPI after).
# With one GPU both ranks share it (--allow-shared-gpu): the device numbers then show where the
# data goes (GPU or host staging), not NVLink bandwidth.
# Usage: GPUCOMM_WHEELS=DIR bash bench/results/2026-12-01-nvidia-h200/21-host-coll-latency/command-mpi-build-check.sh OUT
#   (VARIANTS: command-host-coll-latency.sh's)
OUT=${1:?usage: bench/results/2026-12-01-nvidia-h200/21-host-coll-latency/command-mpi-build-check.sh OUT}
source bench/device-env.sh
set -o pipefail
T0=$(date +%s)
step() { echo; echo "=== $(date +%T) [+$(( $(date +%s) - T0 )) s] $*"; }
P=$(dirname "$(dirname "$(command -v mpirun)")")
step node; nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv,noheader; nproc
echo "MPI: $P $(mpirun --version | head -1)"
ompi_info | grep -E 'MCA (pml|coll|accelerator):' | awk '{print $2 $3}' | tr '\n' ' '; echo
"$P/bin/ucc_info" -v 2>&1 | head -5
step probe; timeout 150 python3 -m gpucomm probe > "$OUT/probe.json"; echo "probe rc=$?"
python3 -c "import json; d=json.load(open('$OUT/probe.json')); print(json.dumps(d['gpu_aware_mpi'], indent=1)); print('libnccl', d.get('libnccl'))"
CANDS=$(python3 -c "
from gpucomm.site.probe import node_info; from gpucomm.site import siteconf as s
i = node_info(); c = dict(s.gpu_aware_candidates(i))
x = ['-x', 'GPUCOMM_GPU_AWARE_MPI=full']
print(' '.join(s.local_binding_options(i) + c.get('pml-ucx', []) + x))
print(' '.join(s.local_binding_options(i) + c.get('pml-ucx-ucc', []) + x))")
NOUCC=$(echo "$CANDS" | sed -n 1p); UCC=$(echo "$CANDS" | sed -n 2p)
echo "pml-ucx:     $NOUCC"; echo "pml-ucx-ucc: $UCC"
S="--allow-shared-gpu --sizes 8,1M,64M --budget 0.3 --timeout 50"
for op in allreduce alltoall; do
  step "UCC_COLL_TRACE=info: $op gpu-aware-mpi and host at 1 MiB (which TL)"
  timeout 60 mpirun -np 2 $UCC -x UCC_COLL_TRACE=info python3 -m gpucomm $op --method gpu-aware-mpi,host \
      --allow-shared-gpu --sizes 1M --iters 3 --warmup 1 2>&1 | grep -E "UCC_COLL.*coll_init: (Allreduce sum|Alltoall):|rror" \
      | sed -E 's/.*coll_init: //; s/0x[0-9a-f]+/ADDR/g' | sort | uniq -c
  for v in NOUCC UCC; do
    step "$op gpu-aware-mpi, $v"
    timeout 60 mpirun -np 2 ${!v} python3 -m gpucomm $op --method gpu-aware-mpi $S --json "$OUT/gam-$op-$v.json" 2>&1 \
        | grep -E '^(# |  )|rror' | tail -8
  done
done
step "host-coll-latency variants"
( VARIANTS=${VARIANTS:-local accel-null ucc} bash "$(dirname "$0")/command-host-coll-latency.sh" "$OUT/hcl" ) 2>&1 | grep -vE '^=== .* node$'
(cd "$OUT" && tar czf records.tgz *.json hcl/records.tgz && rm -rf *.json hcl); ls -la "$OUT"
