#!/usr/bin/env bash
# Issue 53 on the GPU machine (kind nvidia-h200), one call, under 540 s (NOT RUN YET: written on the
# CPU machine): bench/gpu-cluster.sh's 4-node cluster (namespace nodes ggn1-4 sharing one H200), then
# the per-node acceptance as one job per node (docs/acceptance.md step 1b):
#   --mode acceptance-node --distribute=all --repeat=5, the host ping-pong and all-reduce inside each
#   node job (-S NodeAcceptanceCheck.checks=...) at 8 B, 1 MiB and 64 MiB, 4 jobs at once:
#   node-job-healthy   the cluster as it is;
#   node-job-slow-ggn3 GPUCOMM_TEST_SLOW_NODE=ggn3:1.1 (every timed sample on ggn3 10 % slower);
# each judged by `gpucomm acceptance` (exit code, lists): the slow session should drain ggn3 alone,
# naming the inner check(s). Everything into OUT/run.log.
# From the repository root, as root, .whl/ and .deb/ carried (bench/download-wheels.sh):
#   [LIMIT=S] [REPEAT=5] [MAX_JOBS=4] [CHECKS=REGEX] [SIZES=LIST] [SESSIONS='healthy slow-ggn3'] bash bench/results/2026-12-05-nvidia-h200/53-node-job/run.sh OUT
# (MAX_JOBS=1: one node job at a time, so the namespace nodes, which share one machine, do not
# run different checks side by side as separate nodes never would; CHECKS: the node job's inner
# checks, NodeAcceptanceCheck.checks, e.g. '^DataPathsCheck' (device-driven copies, one GPU a node);
# SIZES: -S sizes)
set -uo pipefail
OUT=${1:?OUT}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd); export OUT
exec > >(tee -a "$OUT/run.log") 2>&1
LIMIT=${LIMIT:-170} REPEAT=${REPEAT:-5} MAX_JOBS=${MAX_JOBS:-4}
T0=$SECONDS
phase() { echo; echo "=== $* (t=$((SECONDS - T0)) s, $(date -u +%H:%M:%S) UTC)"; }
phase "device-env, up"
# shellcheck source=../../../device-env.sh
source bench/device-env.sh >"$OUT/device-env.log" 2>&1 ||
    { echo "device-env failed"; tail -n 5 "$OUT/device-env.log"; exit 1; }
set -uo pipefail
export RFM_ENABLE_RESULTS_STORAGE=n
git log -1 --format='commit %H' 2>/dev/null || true
trap 'phase down; bash bench/gpu-cluster.sh down >"$OUT/down.out" 2>&1; tail -n 1 "$OUT/down.out"' EXIT
bash bench/gpu-cluster.sh up --nodes 4 >"$OUT/up.out" 2>&1 || { echo "up failed"; tail -n 30 "$OUT/up.out"; exit 1; }
eval "$(bash bench/gpu-cluster.sh env)"
CHECKS=${CHECKS:-'^(PingPongCheck|AllReduceCheck)%method=host$'} SIZES=${SIZES:-8,1M,64M}
session() {  # session NAME [ENV=VALUE...]: one node-job session, its report, log and summary
    local name=$1 s=$SECONDS rc=0; shift
    phase "$name: --mode acceptance-node --distribute=all --repeat=$REPEAT, $MAX_JOBS job(s) at once, checks $CHECKS, sizes $SIZES ${*:-}"
    env "$@" GPUCOMM_GPUCLUSTER_MAX_JOBS="$MAX_JOBS" timeout -s INT -k 15 "$LIMIT" \
        python3 "$(command -v reframe)" -C config/settings.py --system gpucluster:gpu -c checks/ \
        --mode acceptance-node --distribute=all --repeat="$REPEAT" -S "NodeAcceptanceCheck.checks=$CHECKS" \
        -S sizes="$SIZES" -r --prefix "$OUT/rfm-$name" --report-file "$OUT/$name.json" \
        >"$OUT/$name.log" 2>&1 || rc=$?
    echo "session $name: rc=$rc wall=$((SECONDS - s)) s"
    grep -aE "acceptance plan|PASSED|FAILED" "$OUT/$name.log" | tail -n 3
    python3 - "$OUT/$name.json" <<'PY'
import json, sys
try:
    cases = json.load(open(sys.argv[1]))["runs"][0]["testcases"]
except Exception as exc:
    sys.exit(f"  no report: {exc}")
for c in cases:
    print(f"  {c['result']:5} {c['display_name']} {c.get('time_run') or 0:.1f} s: {c.get('node_checks')}")
PY
    rm -rf "$OUT/rfm-$name"
}
verdict() {  # verdict NAME SESSION...: gpucomm acceptance, its exit code and lists
    local name=$1 rc=0; shift
    python3 -m gpucomm acceptance "$@" --out "$OUT/verdict-$name" >"$OUT/verdict-$name.out" 2>&1 || rc=$?
    echo "verdict $name: exit $rc"; sed 's/^/  /' "$OUT/verdict-$name.out" | head -n 30
}
for which in ${SESSIONS:-healthy slow-ggn3}; do
    case $which in
        healthy) session node-job-healthy; verdict healthy "$OUT/node-job-healthy.json" ;;
        slow-ggn3) session node-job-slow-ggn3 GPUCOMM_TEST_SLOW_NODE=ggn3:1.1
                   verdict slow-ggn3 "$OUT/node-job-slow-ggn3.json" ;;
        *) echo "SESSIONS: $which? (healthy, slow-ggn3)"; exit 2 ;;
    esac
done
phase done
