#!/usr/bin/env bash
# bash bind.sh OUT [BUDGET [MODES [OPS]]]: 6 rounds of one-node 2-rank jobs on gcn1 and gcn3, each
# rank unbound (none) or bound to CPU SLURM_PROCID (bind, taskset); does binding the 2 ranks of a one-node cluster job to different CPUs cut the noise?
set -uo pipefail
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
export PATH="$PWD/.venv/bin:$PATH:/usr/local/sbin:/usr/sbin:/sbin"
export SLURM_CONF=/tmp/gpucomm-cluster/slurm.conf
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=10.77.0.0/24 OMPI_MCA_oob_tcp_if_include=10.77.0.0/24 SLURM_PMIX_FENCE=ring OMPI_MCA_mpi_yield_when_idle=1 PMIX_MCA_psec=native GPUCOMM_LOOP=mpi4py
OUT=${1:-/tmp/bindexp}; BUDGET=${2:-0.25}; MODES=${3:-none bind}; OPS=${4:-pingpong alltoall}; mkdir -p $OUT
trap 'bash .ci/cluster-down.sh >$OUT/down.log 2>&1' EXIT
bash .ci/cluster-up.sh --nodes 4 --leaves 2 --inter-switch-rate 50mbit >$OUT/up.log 2>&1 || { tail $OUT/up.log; exit 1; }
PY=$PWD/.venv/bin/python
for rep in 1 2 3 4 5 6; do
 for mode in $MODES; do
  for op in $OPS; do
   for n in gcn1 gcn3; do
    if [ $mode = bind ]; then pre=(sh -c 'exec taskset -c $SLURM_PROCID "$@"' sh); else pre=(); fi
    f=$OUT/$mode-$op-$n-$rep.json
    srun --partition=cluster --mpi=pmix -N1 -n2 -w $n "${pre[@]}" $PY -m gpucomm $op --method host --sizes 8,1M --budget $BUDGET --json $f >$OUT/$mode-$op-$n-$rep.log 2>&1 || echo "fail $f"
   done
  done
 done
done
