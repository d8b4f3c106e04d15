#!/usr/bin/env bash
# The inter-node logic on a 2-GPU node: the multi ping-pong of every method with 2 ranks as
# 2 "nodes" x 1 GPU (rank groups as nodes, the payload's --ranks-per-node), under ReFrame with
# the local system, 1 B..1 GiB, every size validated.  About 2 minutes.
# Usage (repository root, after `source bench/device-env.sh`): bench/h200x2-internode.sh OUTDIR
# OUTDIR gets 6 files: topo.txt, probe.json, reframe.log, report.json, walltime.txt and
# output.tgz (ReFrame's output/: job scripts, payload output, gpucomm_results.json per case).
set -u
out=${1:?usage: bench/h200x2-internode.sh OUTDIR}
mkdir -p "$out"
prefix=$(mktemp -d)
nvidia-smi topo -m > "$out/topo.txt" 2>&1
python3 -m gpucomm probe > "$out/probe.json" 2>&1
start=$(date +%s)
timeout 170 python3 "$(command -v reframe)" -C config/settings.py -c checks/internode.py -r \
    -n 'MultiPingPongCheck.*%pairs=single' -S emulate_nodes=y \
    --prefix "$prefix" --report-file "$out/report.json" 2>&1 | tee "$out/reframe.log"
rc=${PIPESTATUS[0]}
echo "WALL $(( $(date +%s) - start )) s, reframe exit $rc" | tee "$out/walltime.txt"
tar czf "$out/output.tgz" -C "$prefix" output 2>/dev/null
rm -rf "$prefix"
exit "$rc"
