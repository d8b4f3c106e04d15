#!/usr/bin/env bash
# Issue 40: the committed acceptance sessions of the GPU cluster (40-gpu-cluster-acceptance, one
# H200, 4 namespace nodes, --repeat=4) and of the CI cluster (40-ci-cluster-acceptance, 2 cores,
# --repeat=5) judged by gpucomm acceptance's noise-model verdict, defaults unless said; a class
# file from two healthy sessions judging the third.  From the repository root, .venv active:
#   bash bench/results/2026-12-03-cpu-2core/40-verdict-real-runs/judge.sh OUT
set -u
OUT=${1:?OUT}
mkdir -p "$OUT"
G=bench/results/2026-12-03-nvidia-h200/40-gpu-cluster-acceptance
C=bench/results/2026-12-03-cpu-2core/40-ci-cluster-acceptance/call
judge() {  # NAME ARGS...: gpucomm acceptance ARGS --out OUT/NAME, its output and rc in OUT/NAME.out
    local name=$1; shift
    gpucomm acceptance "$@" --out "$OUT/$name" --force > "$OUT/$name.out" 2>&1
    echo "rc=$?" >> "$OUT/$name.out"
    echo "== $name: gpucomm acceptance $*"; grep -E "pass, |^  |^note|^noise|^rc=" "$OUT/$name.out" | cut -c1-220
}
for i in 1 2 3; do judge gpu-healthy-$i $G/call/node-healthy-$i.json; done
judge gpu-healthy-pooled $G/call/node-healthy-1.json $G/call/node-healthy-2.json $G/call/node-healthy-3.json
gpucomm tolerances --fleet $G/call/node-healthy-1.json $G/call/node-healthy-2.json --class "$OUT/gpu-class-12.json" \
    --md "$OUT/gpu-class-12.md" > "$OUT/gpu-class-12.out" 2>&1; echo "class 1+2 rc=$?"
judge gpu-healthy-3-class12 $G/call/node-healthy-3.json --class "$OUT/gpu-class-12.json"
gpucomm tolerances --fleet $G/call/node-healthy-1.json $G/call/node-healthy-2.json $G/call/node-healthy-3.json \
    --class "$OUT/gpu-class-123.json" --md "$OUT/gpu-class-123.md" > "$OUT/gpu-class-123.out" 2>&1; echo "class 1-3 rc=$?"
judge gpu-slow-ggn3 $G/call-slow/node-slow-ggn3.json
judge gpu-slow-ggn3-class $G/call-slow/node-slow-ggn3.json --class "$OUT/gpu-class-123.json"
judge gpu-slow-ggn3-retest $G/call-slow/node-slow-ggn3.json $G/call-slow/node-retest-ggn3.json
judge gpu-pairs-healthy $G/call/pairs-healthy.json
judge gpu-pairs-ggn3-shaped $G/call/pairs-ggn3-shaped.json
for i in 1 2 3; do judge ci-healthy-$i $C/healthy-$i.json; done
judge ci-slow-gcn3 $C/slow-gcn3.json
judge ci-slow-gcn3-retest $C/slow-gcn3.json $C/retest-gcn3.json
