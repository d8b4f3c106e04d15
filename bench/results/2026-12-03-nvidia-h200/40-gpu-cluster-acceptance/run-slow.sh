#!/usr/bin/env bash
# Issue 40 on the GPU machine, a second call: the per-node session of run.sh (host ping-pong and
# all-reduce, --distribute=all --repeat=4, 4 jobs at once) with ggn3 slowed 10 % by
# GPUCOMM_TEST_SLOW_NODE=ggn3:1.1 (exported: sbatch and srun hand it to every job, only ggn3's
# fire it), then the retest of ggn3 alone (-J=--nodelist=ggn3), still slowed.  The healthy
# sessions to judge them with are run.sh's node-healthy-1..3 (their NodeStateCheck left out here).
# From the repository root, as root, .whl/ and .deb/ carried:
#   bash bench/results/2026-12-03-nvidia-h200/40-gpu-cluster-acceptance/run-slow.sh OUT
set -uo pipefail
OUT=${1:?OUT}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd); export OUT
T0=$SECONDS
phase() { echo; echo "=== $* (t=$((SECONDS - T0)) s, $(date -u +%H:%M:%S) UTC)"; }
phase "device-env, up"
# shellcheck source=../../../device-env.sh
source bench/device-env.sh >"$OUT/device-env.log" 2>&1 ||
    { echo "device-env failed"; tail -n 5 "$OUT/device-env.log"; exit 1; }
set -uo pipefail
export RFM_ENABLE_RESULTS_STORAGE=n
trap 'phase down; bash bench/gpu-cluster.sh down >"$OUT/down.out" 2>&1; tail -n 1 "$OUT/down.out"' EXIT
bash bench/gpu-cluster.sh up --nodes 4 >/dev/null || { echo "up failed"; tail -n 30 "$OUT/up.log"; exit 1; }
eval "$(bash bench/gpu-cluster.sh env)"
rfm() {  # rfm NAME ARGS...: one per-node session (run.sh's), its report, log, summary and outputs
    local name=$1 s=$SECONDS rc=0; shift
    GPUCOMM_TEST_SLOW_NODE=ggn3:1.1 GPUCOMM_GPUCLUSTER_MAX_JOBS=4 timeout -s INT -k 10 70 \
        python3 "$(command -v reframe)" -C config/settings.py --system gpucluster:gpu -c checks/ \
        --mode acceptance --distribute=all --repeat=4 -n '^(PingPongCheck|AllReduceCheck)%method=host$' \
        -S sizes=8,1M -S iters=20 -S exclusive_access=true -S time_limit=60s "$@" -r \
        --prefix "$OUT/rfm-$name" --report-file "$OUT/$name.json" >"$OUT/$name.log" 2>&1 || rc=$?
    echo "session $name: rc=$rc wall=$((SECONDS - s)) s; $(grep -aE 'PASSED|FAILED' "$OUT/$name.log" | tail -n 1)"
    python3 - "$OUT/$name.json" <<'PY' | tee "$OUT/$name.summary"
import collections, json, sys
cases = json.load(open(sys.argv[1]))["runs"][0]["testcases"]
print("  cases:", dict(collections.Counter(c["result"] for c in cases)))
for c in cases:
    vals = " ".join(f"{k.split(':')[-1]}={v[0]:.4g}" for k, v in sorted((c.get("perfvalues") or {}).items()))
    print(f"  {c['result']:5} {c['display_name']}: {vals}")
PY
    (cd "$OUT/rfm-$name" && find output stage -name gpucomm_results.json -o -name rfm_job.out -o -name rfm_job.err |
        tar czf "$OUT/$name-outputs.tgz" -T -) && rm -rf "$OUT/rfm-$name"
}
phase "node-slow-ggn3: GPUCOMM_TEST_SLOW_NODE=ggn3:1.1"
rfm node-slow-ggn3
phase "node-retest-ggn3: -J=--nodelist=ggn3, still slowed"
rfm node-retest-ggn3 -J=--nodelist=ggn3
phase done
