#!/usr/bin/env bash
# The verdicts beyond each session's own (README), from the committed reports, on the CPU machine:
#   pooled   both gcn3:1.1 sessions (call-1, call-2) judged together (k = 10 a node)
#   class    call-2's gcn3:1.1 session against a class file of the two healthy sessions
#            (gpucomm tolerances --fleet call-1/healthy-1.json call-1/healthy-2.json)
#   rule     the fleet rule's numbers (analysis.fleetrule.judge) of call-2's gcn3:1.1 ping-pong
#            8 B latency, the one variable that was judged: why gcn3 passed
# From the repository root, the venv of /work/main (or VENV=...):
#   bash bench/results/2026-12-05-cpu-2core/53-node-job-ci-cluster/judge.sh OUT
set -uo pipefail
OUT=${1:?OUT}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
HERE=bench/results/2026-12-05-cpu-2core/53-node-job-ci-cluster
PY=${VENV:-/work/main/.venv}/bin/python
export PYTHONPATH="$PWD/src"
echo "=== pooled: gpucomm acceptance call-1/slow-gcn3.json call-2/slow-gcn3.json"
$PY -m gpucomm acceptance "$HERE/call-1/slow-gcn3.json" "$HERE/call-2/slow-gcn3.json" --out "$OUT/verdict-slow-pooled"
echo "rc=$?"
echo "=== class: tolerances --fleet healthy-1 healthy-2, then call-2/slow-gcn3.json --class"
$PY -m gpucomm tolerances --fleet "$HERE/call-1/healthy-1.json" "$HERE/call-1/healthy-2.json" \
    --class "$OUT/class.json" --md "$OUT/class.md"
echo "rc=$?"
$PY -m gpucomm acceptance "$HERE/call-2/slow-gcn3.json" --class "$OUT/class.json" --out "$OUT/verdict-slow-class"
echo "rc=$?"
echo "=== rule: call-2/slow-gcn3 PingPongCheck %method=host latency_8B, per node"
$PY - "$HERE/call-2/slow-gcn3.json" <<'PY'
import json, sys
import numpy as np
from gpucomm.analysis import fleetrule
key = "ci:cluster:PingPongCheck %method=host:latency_8B"
vals = {}
for c in json.load(open(sys.argv[1]))["runs"][0]["testcases"]:
    nid = c["display_name"].split("%.nid=")[1].split()[0]
    vals.setdefault(nid, []).append(c["perfvalues"][key][0])
nodes = sorted(vals)
j = fleetrule.judge(np.log(np.array([vals[n] for n in nodes])), 2)
for i, n in enumerate(nodes):
    print(f"  {n}: repeats {' '.join(f'{v:.3g}' for v in vals[n])} us; loss {j.loss[i]:+.3f}, "
          f"z {j.z[i]:.1f} (bound {j.bound[i]:.2f}), tail p {j.tail[i]:.3f}, flagged {bool(j.flag[i])}")
print(f"  within {j.within:.4f}, judgeable {j.judgeable}, detectable loss {np.nanmedian(j.detectable):.3f}")
PY
