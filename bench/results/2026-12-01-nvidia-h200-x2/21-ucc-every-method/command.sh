#!/bin/bash
# Issues 21 and 22 on nvidia-h200-x2 in one device call, from the repository root, with the
# CUDA-aware Open MPI (ext/ompi-cuda.tar.xz: bench/build/cuda-host.sh + ucx-prefix.sh + ompi.sh)
# picked up by bench/device-env.sh:
#   the GPU-aware level by probing; the payload's gpu-aware-mpi on every operation under it;
#   under ReFrame, every method on ping-pong, bw, all-reduce and all-to-all (the perf points'
#   sizes); nvshmem's short ping-pong under three CPU bindings (the health sweep's erratic
#   numbers); OSU -d cuda; the health mode HEALTH_RUNS [2] times; bench/compare's COMPARE_ONLY
#   [host] pair at COMPARE_SIZES [8,64M]; every results file kept (process age, set-up, per size).
# Usage: GPUCOMM_WHEELS=DIR bash bench/results/2026-12-01-nvidia-h200-x2/21-ucc-every-method/command.sh OUT [STAGES]   (STAGES: default all of
#   env probe payload nvshmem native health compare reframe; the last one gets the time left of
#   DEADLINE [575] s)
OUT=${1:?usage: bench/results/2026-12-01-nvidia-h200-x2/21-ucc-every-method/command.sh OUT [STAGES]}
STAGES=${2:-env probe payload nvshmem native health compare reframe}
source bench/device-env.sh
set -o pipefail
T0=$(date +%s)
step() { echo; echo "=== $(date +%T) [+$(( $(date +%s) - T0 )) s] $*"; }
want() { case " $STAGES " in *" $1 "*) return 0 ;; esac; return 1; }
MPI="mpirun -np 2"
# no colours: the greps below read ReFrame's [ OK ] / [ FAIL ] lines
RFM="reframe -C config/settings.py --nocolor"
step node; nvidia-smi --query-gpu=index,name,pci.bus_id,clocks.sm,power.draw --format=csv,noheader
echo "MPI: $(command -v mpirun) $(mpirun --version | head -1)"; echo "GPUCOMM_MPI_PREFIX=${GPUCOMM_MPI_PREFIX:-}"
env | grep -E '^(NVSHMEM|NCCL_NVLS|TORCH_SYMM)' | sort
if want env; then
  step ompi_info; ompi_info | grep -E 'MCA (pml|btl|coll|accelerator):' | awk '{print $2 $3}' | tr '\n' ' '; echo
  ompi_info --parsable --all 2>/dev/null | grep -E 'mpi_built_with_cuda_support:value'
  step nvshmem build; timeout 150 python3 -m gpucomm.payload.nvshmem.build sm_90; echo "build rc=$?"
fi
if want probe; then
  step probe; timeout 120 python3 -m gpucomm probe > "$OUT/probe.json"; echo "probe rc=$?"
  python3 -c "import json; d=json.load(open('$OUT/probe.json'))['gpu_aware_mpi']; print(json.dumps(d, indent=1))"
fi
OPTS=$(python3 -c "from gpucomm.site.probe import node_info; from gpucomm.site.siteconf import local_mpirun_options as o; print(' '.join(o(node_info())))")
echo "mpirun options: $OPTS"
if want payload; then
  for op in pingpong bw allreduce alltoall; do
    step "payload $op gpu-aware-mpi"
    timeout 40 $MPI $OPTS python3 -m gpucomm $op --method gpu-aware-mpi --sizes 8,1M,64M,1G --budget 0.3 --timeout 35 | grep -vE '^GPUCOMM-'
  done
  for op in allreduce alltoall; do
    step "which collective takes device buffers in $op (UCC_COLL_TRACE, where coll/ucc is on)"
    timeout 40 $MPI $OPTS -x UCC_COLL_TRACE=info python3 -m gpucomm $op --method gpu-aware-mpi --sizes 1M \
        --iters 3 --warmup 1 2>&1 | grep -E 'UCC_COLL.*(Allreduce sum|Alltoall).*Cuda' | head -2
  done
fi
if want nvshmem; then
  # nvshmem's short, budgeted runs stalled ~2 ms per sample (21-every-method, call 1): Open MPI
  # binds each of two ranks to one core, shared by NVSHMEM's proxy thread and the rank's own;
  # host first (the binding's effect on the host latency), then nvshmem, twice per binding
  S="--sizes 8,1M,64M --budget 0.25 --warmup 2 --timeout 40"
  for b in "" "--bind-to none" "--map-by slot:PE=4 --bind-to core"; do
    for i in 1 2; do
      step "binding '${b:-default}' ($i): pingpong host,nvshmem $S"
      timeout 45 $MPI $OPTS $b python3 -m gpucomm pingpong --method host,nvshmem $S | grep -E '^(# gpucomm|  )'
    done
  done
fi
if want native; then
  step "reframe: OSU with device buffers (-d cuda), collectives included"
  d=/tmp/gpucomm-tools; mkdir -p $d && tar xJf "${TOOLS:-ext/tools.tar.xz}" -C $d && \
      export GPUCOMM_OSU_DIR=$d/osu GPUCOMM_NCCL_TESTS_DIR=$d/nccl-tests
  # ReFrame's Name%param=value matches the parameters in order: name the benchmark, both buffers run
  timeout 100 $RFM -c checks/native.py -n 'OsuCheck%bench=osu_allreduce' -n 'OsuCheck%bench=osu_alltoall' \
      -n 'OsuCheck%bench=osu_latency' -n 'OsuCheck%bench=osu_bw' -r --report-file "$OUT/report-osu.json" 2>&1 \
      | tee "$OUT/osu.log" | grep -vE '^\[ *(RUN) *\]' | tail -40
fi
if want health; then
  for i in $(seq "${HEALTH_RUNS:-2}"); do
    step "health mode $i (nvshmem in the sweeps, the local system's mpirun options)"; t1=$(date +%s.%N)
    timeout 110 $RFM -c checks/ --mode health -r --report-file "$OUT/report-health-$i.json" 2>&1 \
        | grep -E '^(P:|\[ *(OK|FAIL|SKIP|PASSED|FAILED)|.*(FAIL|Reason))' | tail -60
    echo "health mode wall $(python3 -c "print(round($(date +%s.%N)-$t1,1))") s"
  done
fi
if want compare; then
  step "bench/compare, host pair: 8 B with OSU's 10000 iterations, 64 MiB"
  d=/tmp/gpucomm-tools; mkdir -p $d && tar xJf "${TOOLS:-ext/tools.tar.xz}" -C $d && \
      export GPUCOMM_OSU_DIR=$d/osu GPUCOMM_NCCL_TESTS_DIR=$d/nccl-tests
  timeout 120 bench/compare --only ${COMPARE_ONLY:-host} --sizes ${COMPARE_SIZES:-8,64M} --repeats 3 --out "$OUT/compare" 2>&1 | tail -20
  cat "$OUT/compare/compare.md" 2>/dev/null
fi
if want reframe; then
  step "reframe: every method, ping-pong, bw, all-reduce, all-to-all"
  timeout $(( ${DEADLINE:-575} - ($(date +%s) - T0) )) $RFM -c checks/pingpong.py -c checks/bw.py -c checks/collectives.py \
      -n PingPongCheck -n BwCheck -n AllReduceCheck -n AllToAllCheck -S sizes=8,1M,64M,256M,1G -S budget=0.3 \
      -r --report-file "$OUT/report-every-method.json" 2>&1 | tee "$OUT/every-method.log" | grep -vE '^\[ *(RUN) *\]' | tail -150
fi
step keep; tar czf "$OUT/outputs.tgz" --exclude="*.so" $(find output -name 'gpucomm_results*.json' -o -name 'rfm_job.out' -o -name 'rfm_job.err' -o -name 'rfm_job.sh' | head -900) 2>/dev/null
ls -la "$OUT"
