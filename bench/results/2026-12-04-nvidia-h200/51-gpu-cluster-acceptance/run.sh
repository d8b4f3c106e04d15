#!/usr/bin/env bash
# Issue 51 on the GPU machine (kind nvidia-h200), one call: bench/gpu-cluster.sh's 4-node cluster
# (namespace nodes ggn1-4, one H200 shared under MPS, 2 leaf switches), then docs/acceptance.md
# step 1 as the issue asks: --mode acceptance --distribute=all --repeat=5, the host ping-pong and
# all-reduce at 8 B, 1 MiB and 64 MiB at the checks' default iterations, 4 jobs at once:
#   node-healthy-1..N   the cluster as it is;
#   node-slow-ggn3      GPUCOMM_TEST_SLOW_NODE=ggn3:1.1 exported (sbatch and srun hand it to every
#                       job; only ggn3's fire it: every timed sample 10 % slower);
# each judged on the machine by `gpucomm acceptance` (its exit code and lists), the slow one alone
# and with the class file of the healthy ones (gpucomm tolerances --fleet ... --class).
# From the repository root, as root, .whl/ and .deb/ carried:
#   bash bench/results/2026-12-04-nvidia-h200/51-gpu-cluster-acceptance/run.sh OUT [HEALTHY]
set -uo pipefail
OUT=${1:?OUT}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd); export OUT
HEALTHY=${2:-3} LIMIT=${LIMIT:-125}
T0=$SECONDS
phase() { echo; echo "=== $* (t=$((SECONDS - T0)) s, $(date -u +%H:%M:%S) UTC)"; }
phase "device-env, up"
# shellcheck source=../../../device-env.sh
source bench/device-env.sh >"$OUT/device-env.log" 2>&1 ||
    { echo "device-env failed"; tail -n 5 "$OUT/device-env.log"; exit 1; }
set -uo pipefail
export RFM_ENABLE_RESULTS_STORAGE=n
bash bench/gpu-cluster.sh facts >"$OUT/facts.log" 2>&1
grep -E "machine|os:|MPS|GPU device" "$OUT/facts.log"
trap 'phase down; bash bench/gpu-cluster.sh down >"$OUT/down.out" 2>&1; tail -n 1 "$OUT/down.out"' EXIT
bash bench/gpu-cluster.sh up --nodes 4 >"$OUT/up.out" 2>&1 || { echo "up failed"; tail -n 30 "$OUT/up.out"; exit 1; }
eval "$(bash bench/gpu-cluster.sh env)"
CHECKS='^(PingPongCheck|AllReduceCheck)%method=host$'
session() {  # session NAME [ENV=VALUE...]: one step-1 session, its report, log and summary
    local name=$1 s=$SECONDS rc=0; shift
    phase "$name: --distribute=all --repeat=5, 4 jobs at once ${*:-}"
    env "$@" GPUCOMM_GPUCLUSTER_MAX_JOBS=4 timeout -s INT -k 15 "$LIMIT" \
        python3 "$(command -v reframe)" -C config/settings.py --system gpucluster:gpu -c checks/ \
        --mode acceptance --distribute=all --repeat=5 -n "$CHECKS" -S sizes=8,1M,64M \
        -S exclusive_access=true -r --prefix "$OUT/rfm-$name" --report-file "$OUT/$name.json" \
        >"$OUT/$name.log" 2>&1 || rc=$?
    echo "session $name: rc=$rc wall=$((SECONDS - s)) s; $(grep -aE 'PASSED|FAILED' "$OUT/$name.log" | tail -n 1)"
    python3 - "$OUT/$name.json" <<'PY' | tee "$OUT/$name.summary"
import collections, json, sys
try:
    cases = json.load(open(sys.argv[1]))["runs"][0]["testcases"]
except Exception as exc:
    sys.exit(f"  no report: {exc}")
print("  cases:", dict(collections.Counter(c["result"] for c in cases)))
for c in cases:
    vals = " ".join(f"{k.split(':')[-1]}={v[0]:.4g}" for k, v in sorted((c.get("perfvalues") or {}).items()))
    print(f"  {c['result']:5} {c['display_name']} {c.get('time_run') or 0:.1f} s: {vals}")
PY
    rm -rf "$OUT/rfm-$name"
}
verdict() {  # verdict NAME SESSION... [-- ARGS]: gpucomm acceptance, its exit code and lists
    local name=$1 rc=0; shift
    python3 -m gpucomm acceptance "$@" --out "$OUT/verdict-$name" >"$OUT/verdict-$name.out" 2>&1 || rc=$?
    echo "verdict $name: exit $rc"; sed 's/^/  /' "$OUT/verdict-$name.out" | head -n 30
}
healthy=()
for i in $(seq 1 "$HEALTHY"); do
    session "node-healthy-$i" && healthy+=("$OUT/node-healthy-$i.json")
    verdict "healthy-$i" "$OUT/node-healthy-$i.json"
done
session node-slow-ggn3 GPUCOMM_TEST_SLOW_NODE=ggn3:1.1
verdict slow-ggn3 "$OUT/node-slow-ggn3.json"
if [ "${#healthy[@]}" -ge 2 ]; then
    python3 -m gpucomm tolerances --fleet "${healthy[@]}" --class "$OUT/class.json" --md "$OUT/class.md" \
        >"$OUT/tolerances.out" 2>&1; echo "tolerances --fleet --class: exit $?"
    verdict slow-ggn3-class "$OUT/node-slow-ggn3.json" --class "$OUT/class.json"
fi
phase done
