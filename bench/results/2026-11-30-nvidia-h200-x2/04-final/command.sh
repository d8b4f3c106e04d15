#!/usr/bin/env bash
# The committed intra-node run on a 2-GPU node: ping-pong (1 B..1 GiB) and the collectives
# (8 B..1 GiB), every method, under ReFrame with the local references, each timed.
# Usage (repository root, after `source bench/device-env.sh`): bench/h200x2-final.sh OUTDIR
out=${1:?outdir}; mkdir -p "$out"
nvidia-smi topo -m > "$out/topo.txt" 2>&1
rfm="python3 $(command -v reframe) -C config/settings.py -c checks/ -r"
for set in PingPongCheck "AllReduceCheck|AllToAllCheck"; do
  name=$(echo "$set" | tr -dc 'A-Za-z' | cut -c1-24)
  start=$(date +%s)
  $rfm -n "$set" --report-file "$out/report-$name.json" 2>&1 | tee "$out/reframe-$name.log"
  echo "WALL $set: $(( $(date +%s) - start )) s" | tee -a "$out/walltimes.txt"
done
tar czf "$out/outputs.tgz" output/ 2>/dev/null
