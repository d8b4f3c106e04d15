#!/usr/bin/env bash
# The committed sessions of call/ judged again by this tree's `gpucomm acceptance` (CPU machine):
# each healthy session alone, the three pooled, the slow one alone and against the class file of
# the three healthy ones; exit codes and lists into OUT (default rejudged/).
#   bash bench/results/2026-12-04-nvidia-h200/51-gpu-cluster-acceptance/rejudge.sh [OUT]
set -u
HERE=$(cd "$(dirname "$0")" && pwd); OUT=${1:-$HERE/rejudged}; rm -rf "$OUT"; mkdir -p "$OUT"
C=$HERE/call
v() { local name=$1; shift; python3 -m gpucomm acceptance "$@" --out "$OUT/$name" >"$OUT/$name.out" 2>&1
      echo "$name: exit $? | $(grep -E 'node\(s\) pass' "$OUT/$name.out")"; grep -E '^  ggn' "$OUT/$name.out"; }
for i in 1 2 3; do v "healthy-$i" "$C/node-healthy-$i.json"; done
v healthy-pooled "$C/node-healthy-1.json" "$C/node-healthy-2.json" "$C/node-healthy-3.json"
v slow-ggn3 "$C/node-slow-ggn3.json"
python3 -m gpucomm tolerances --fleet "$C/node-healthy-1.json" "$C/node-healthy-2.json" "$C/node-healthy-3.json" \
    --class "$OUT/class.json" --md "$OUT/class.md" >"$OUT/tolerances.out" 2>&1
v slow-ggn3-class "$C/node-slow-ggn3.json" --class "$OUT/class.json"
