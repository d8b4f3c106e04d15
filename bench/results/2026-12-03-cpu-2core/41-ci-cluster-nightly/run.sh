#!/usr/bin/env bash
# Issue 41's proof on the CI's 4-node CPU cluster (.ci/cluster-up.sh --nodes 4 --leaves 2
# --inter-switch-rate 50mbit: 4 namespace nodes on the 2-core machine, ci:cluster, max_jobs 1):
# `gpucomm nightly --mode health` as cron would run it, every node each night (--distribute=all),
# each session a night (--night-gap 0: they run minutes apart), the history the earlier nights'
# folders next to it (gpucomm nightly's default):
#   HEALTHY nights of the cluster as it is, then
#   SLOW nights with GPUCOMM_TEST_SLOW_NODE=gcn3:FACTOR exported to ReFrame (sbatch --export=ALL and
#   srun hand it to every job): the payload on gcn3 busy-waits FACTOR - 1 of each timed sample's
#   time inside it (payload/faults.py), every variable of gcn3 FACTOR times slower; elsewhere idle.
# Each night's exit code, its verdict line and the drift rows of its flagged or suspect variables.
# From the repository root, as root, the venv in .venv, the CI cluster down:
#   bash bench/results/2026-12-03-cpu-2core/41-ci-cluster-nightly/run.sh OUT [HEALTHY [SLOW [FACTOR [REPEAT]]]]
# REPEAT (default 1): measurements of each check a night (ReFrame's --repeat, one session).
set -uo pipefail
OUT=${1:?OUT}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
HEALTHY=${2:-10} SLOWN=${3:-3} FACTOR=${4:-1.1} REPEAT=${5:-1}
export PATH="$PWD/.venv/bin:$PATH:/usr/local/sbin:/usr/sbin:/sbin"
export SLURM_CONF=/tmp/gpucomm-cluster/slurm.conf RFM_ENABLE_RESULTS_STORAGE=n
unset GPUCOMM_TEST_SLOW_NODE
t0=$SECONDS
phase() { echo; echo "=== $* (t=$((SECONDS - t0)) s, $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg))"; }
trap 'bash .ci/cluster-down.sh >"$OUT/cluster-down.log" 2>&1' EXIT
phase "cluster up"
bash .ci/cluster-up.sh --nodes 4 --leaves 2 --inter-switch-rate 50mbit >"$OUT/cluster-up.log" 2>&1 ||
    { echo "cluster-up failed"; tail "$OUT/cluster-up.log"; exit 1; }
sinfo
mkdir -p "$OUT/nights"
for i in $(seq 1 $((HEALTHY + SLOWN))); do
    night=$(printf "n%02d" "$i")
    if [ "$i" -le "$HEALTHY" ]; then env=(); else env=(GPUCOMM_TEST_SLOW_NODE=gcn3:$FACTOR); fi
    phase "night $night: ${env[*]:-healthy}"
    s=$SECONDS
    env "${env[@]}" gpucomm nightly --mode health --out "$OUT/nights/$night" --night-gap 0 \
        -C config/settings.py --system ci:cluster -c checks/ --distribute=all --repeat "$REPEAT" -n HealthCheck -S sizes=8,1M \
        --prefix "$OUT/rfm/$night" >"$OUT/$night.log" 2>&1
    rc=$?
    echo "rc=$rc wall=$((SECONDS - s)) s" | tee -a "$OUT/$night.log"
    grep -aE '^gpucomm (nightly|health)|PASSED|FAILED' "$OUT/$night.log" | tail -n 3
    python3 - "$OUT/nights/$night/report/drift.csv" <<'PY'
import csv, os, sys
path = sys.argv[1]
if not os.path.exists(path):
    print("  (no drift.csv)"); sys.exit()
rows = list(csv.DictReader(open(path)))
count = lambda st: sum(r["status"] == st for r in rows)
print(f"  drift.csv: {len(rows)} variables: FAIL {count('FAIL')}, suspect {count('suspect')}, ok {count('ok')}, "
      f"new {count('new')}; history {min((r['history'] for r in rows), default='-')} nights")
for r in rows:
    if r["status"] in ("FAIL", "suspect"):
        print(f"  {r['status']} {r['node']} {r['test']} {r['var']}: {r['rule']} value {r['value']} median "
              f"{r['median']} change {r['change']} z {r['z']} b1 {r['b1']} b2 {r['b2']} cusum {r['cusum']}")
PY
done
phase done
