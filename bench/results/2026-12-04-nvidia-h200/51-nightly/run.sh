#!/usr/bin/env bash
# Issue 51 on the GPU machine (kind nvidia-h200), one call: `gpucomm nightly` as cron runs it on
# the node (the autodetected local system, the health mode, the history the earlier nights'
# folders next to --out), each session a night (--night-gap 0: they run a minute apart):
#   HEALTHY nights of the node as it is, then SLOW nights with GPUCOMM_TEST_SLOW_NODE=$(hostname):1.05
#   (the payload busy-waits 5 % of every timed sample: every variable of the node 5 % slower).
# Each night's exit code, its verdict lines and the drift rows of its flagged variables; the
# nights' folders (report.json, report/drift.csv, report/health.txt) come back in nights.tgz.
# From the repository root, as root, .whl/ carried:
#   bash bench/results/2026-12-04-nvidia-h200/51-nightly/run.sh OUT [HEALTHY [SLOW [BUDGET_S]]]
set -uo pipefail
OUT=${1:?OUT}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
HEALTHY=${2:-6} SLOWN=${3:-2} BUDGET=${4:-540}
T0=$SECONDS
phase() { echo; echo "=== $* (t=$((SECONDS - T0)) s, $(date -u +%H:%M:%S) UTC)"; }
phase "device-env"
# shellcheck source=../../../device-env.sh
source bench/device-env.sh >"$OUT/device-env.log" 2>&1 ||
    { echo "device-env failed"; tail -n 5 "$OUT/device-env.log"; exit 1; }
set -uo pipefail
export RFM_ENABLE_RESULTS_STORAGE=n
unset GPUCOMM_TEST_SLOW_NODE
host=$(hostname)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p "$OUT/nights"
for i in $(seq 1 $((HEALTHY + SLOWN))); do
    night=$(printf "n%02d" "$i")
    left=$((BUDGET - (SECONDS - T0)))
    if [ "$left" -lt 60 ]; then echo "no time left for night $night ($left s)"; break; fi
    if [ "$i" -le "$HEALTHY" ]; then env=(); else env=(GPUCOMM_TEST_SLOW_NODE=$host:1.05); fi
    phase "night $night: ${env[*]:-healthy}"
    s=$SECONDS
    env "${env[@]}" timeout -s TERM -k 30 "$left" python3 -m gpucomm nightly --mode health \
        --out "$OUT/nights/$night" --night-gap 0 --prefix "$OUT/rfm/$night" >"$OUT/$night.log" 2>&1
    rc=$?
    echo "night $night: rc=$rc wall=$((SECONDS - s)) s" | tee -a "$OUT/$night.log"
    grep -aE '^gpucomm (nightly|health)|^nightly drift|^DRIFT FAIL|^SUSPECT|PASSED|FAILED' "$OUT/$night.log" |
        cut -c1-400 | head -n 20
    rm -rf "$OUT/rfm/$night"
done
phase done
(cd "$OUT" && tar czf nights.tgz nights n*.log device-env.log)
