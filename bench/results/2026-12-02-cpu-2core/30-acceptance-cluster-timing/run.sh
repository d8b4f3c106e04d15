#!/usr/bin/env bash
# Issue 30's timing on the CI's 4-node CPU cluster (.ci/cluster-up.sh: 4 namespace nodes on
# the 2-core machine, 2 leaf switches, inter-switch links shaped to 50 Mbit/s; ci:cluster has
# max_jobs 1, so distributed jobs run one after the other): docs/acceptance.md's steps as a site
# runs them, each timed.
#   1. --mode acceptance --distribute=all: every one-node host check on every node;
#   2. --mode acceptance-network, the node pair matrix in rounds (pair_scope auto), healthy and
#      with gcn4's link limited to 16 Mbit/s during the run;
#   3. gpucomm acceptance over each session.
# From the repository root, as root, the venv in .venv, the cluster down:
#   bash bench/results/2026-12-02-cpu-2core/30-acceptance-cluster-timing/run.sh OUT
set -uo pipefail
OUT=${1:?OUT}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
export PATH="$PWD/.venv/bin:$PATH:/usr/local/sbin:/usr/sbin:/sbin"
export SLURM_CONF=/tmp/gpucomm-cluster/slurm.conf RFM_ENABLE_RESULTS_STORAGE=n
t0=$SECONDS
phase() { echo; echo "=== $* (t=$((SECONDS - t0)) s)"; }
trap 'bash .ci/cluster-down.sh >/dev/null 2>&1' EXIT
phase "cluster up"
bash .ci/cluster-up.sh --nodes 4 --leaves 2 --inter-switch-rate 50mbit >"$OUT/cluster-up.log" 2>&1 || { echo "cluster-up failed"; tail "$OUT/cluster-up.log"; exit 1; }
sinfo
summary() {  # REPORT: per case its result and the job's run time
    python3 - "$1" <<'PY'
import json, sys, collections
cases = json.load(open(sys.argv[1]))["runs"][0]["testcases"]
print("cases:", dict(collections.Counter(c["result"] for c in cases)))
for c in cases:
    if c["result"] != "skip":
        print(f"  {c['result']:5} {c['display_name']}: run {c.get('time_run') or 0:.1f} s, total {c.get('time_total') or 0:.1f} s")
PY
}
phase "1. per node: --mode acceptance --distribute=all (-S sizes=8,1M -S iters=20)"
s=$SECONDS
reframe -C config/settings.py --system ci:cluster -c checks/ --mode acceptance --distribute=all -r \
    -S sizes=8,1M -S iters=20 --prefix "$OUT/p1" --report-file "$OUT/per-node.json" >"$OUT/per-node.log" 2>&1
echo "rc=$? wall=$((SECONDS - s)) s"
grep -aE 'PASSED|FAILED' "$OUT/per-node.log" | tail -n 2
summary "$OUT/per-node.json"
python3 -m gpucomm acceptance "$OUT/per-node.json" --out "$OUT/verdict-per-node" --variables goodput --min-gap 0.9; echo "rc=$?"
for round in healthy degraded; do
    phase "2. across the nodes: node pair matrix in rounds, 4 nodes, $round (-S sizes=8,256K -S iters=5 -S warmup=2)"
    if [ $round = degraded ]; then
        ( until find "$OUT/p2-$round/stage" -name rfm_job.out -exec grep -qs GPUCOMM-RESULT {} \; -print 2>/dev/null | grep -q .; do sleep 0.5; done
          bash .ci/cluster-ctl.sh degrade gcn4 16mbit ) &
        watcher=$!
    fi
    s=$SECONDS
    reframe -C config/settings.py --system ci:cluster -c checks/cluster/ --mode acceptance-network \
        -n NodePairMatrixCheck -r -S sizes=8,256K -S iters=5 -S warmup=2 \
        --prefix "$OUT/p2-$round" --report-file "$OUT/pairs-$round.json" >"$OUT/pairs-$round.log" 2>&1
    echo "rc=$? wall=$((SECONDS - s)) s"
    [ $round = degraded ] && { wait $watcher; bash .ci/cluster-ctl.sh restore gcn4; }
    grep -aE 'PASSED|FAILED' "$OUT/pairs-$round.log" | tail -n 2
    summary "$OUT/pairs-$round.json"
    python3 - "$OUT/pairs-$round.json" <<'PY'
import json, sys, glob, os
case = json.load(open(sys.argv[1]))["runs"][0]["testcases"][0]
path = next(p for p in (os.path.join(case["outputdir"] or "", "gpucomm_results.json"),
                        os.path.join(case["stagedir"] or "", "gpucomm_results.json")) if os.path.exists(p))
doc = json.load(open(path))
recs = doc["results"]
print(f"pairs: {doc['meta'].get('pairs')}, rounds: {len(doc['meta']['rounds'])}, records: {len(recs)}, "
      f"every record concurrent: {all(r['scope'] == 'concurrent' for r in recs)}")
for r in recs:
    if r["size"] == 262144:
        print(f"  {r['mode']:5} round {r['round']}: " + ", ".join(
            f"{'-'.join(doc['meta']['hosts'][i] for i in p['pair'])} {p['goodput_GBps'] * 1e3:.2f} MB/s"
            for p in r["pair_results"]))
PY
    python3 -m gpucomm acceptance "$OUT/pairs-$round.json" --out "$OUT/verdict-pairs-$round"; echo "rc=$?"
done
phase done
