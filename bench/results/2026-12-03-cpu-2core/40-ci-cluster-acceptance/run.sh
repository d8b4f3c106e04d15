#!/usr/bin/env bash
# Issue 40's proof sessions on the CI's 4-node CPU cluster (.ci/cluster-up.sh --nodes 4 --leaves 2
# --inter-switch-rate 50mbit: 4 namespace nodes on the 2-core machine, ci:cluster, max_jobs 1):
# docs/acceptance.md step 1 with ReFrame's repeats, the host ping-pong and all-reduce of one node
# (-n below: 2 checks x 4 nodes x 5 repeats = 40 jobs a session), 8 B and 1 MiB, 20 iterations:
#   healthy-1, healthy-2, healthy-3   the cluster as it is
#   slow-gcn3     GPUCOMM_TEST_SLOW_NODE=gcn3:1.1 exported to ReFrame, whose sbatch (--export=ALL,
#                 Slurm's default) and srun hand it to every job: the payload on gcn3 busy-waits 10 %
#                 of each timed sample's time inside it (payload/faults.py); elsewhere it is idle
#   retest-gcn3   only that node, still slowed (-J=--nodelist=gcn3 with --distribute=all --repeat=5)
# and after each, the verdict of the day (`gpucomm acceptance SESSION`, defaults): the "before".
# From the repository root, as root, the venv in .venv, the CI cluster down:
#   bash bench/results/2026-12-03-cpu-2core/40-ci-cluster-acceptance/run.sh OUT [SESSION...]
set -uo pipefail
OUT=${1:?OUT}; shift; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
SESSIONS=${*:-healthy-1 healthy-2 healthy-3 slow-gcn3 retest-gcn3}
export PATH="$PWD/.venv/bin:$PATH:/usr/local/sbin:/usr/sbin:/sbin"
export SLURM_CONF=/tmp/gpucomm-cluster/slurm.conf RFM_ENABLE_RESULTS_STORAGE=n
unset GPUCOMM_TEST_SLOW_NODE
SLOW=gcn3:1.1 REPEAT=5
CHECKS='^(PingPongCheck|AllReduceCheck)%method=host$'
t0=$SECONDS
phase() { echo; echo "=== $* (t=$((SECONDS - t0)) s, $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg))"; }
trap 'bash .ci/cluster-down.sh >"$OUT/cluster-down.log" 2>&1' EXIT
phase "cluster up"
bash .ci/cluster-up.sh --nodes 4 --leaves 2 --inter-switch-rate 50mbit >"$OUT/cluster-up.log" 2>&1 ||
    { echo "cluster-up failed"; tail "$OUT/cluster-up.log"; exit 1; }
sinfo
summary() {  # REPORT: per case its result, node, repeat and values
    python3 - "$1" <<'PY'
import collections, json, sys
cases = json.load(open(sys.argv[1]))["runs"][0]["testcases"]
print("cases:", dict(collections.Counter(c["result"] for c in cases)))
for c in cases:
    vals = " ".join(f"{k.split(':')[-1]}={v[0]:.4g}" for k, v in sorted((c.get("perfvalues") or {}).items()))
    print(f"  {c['result']:5} {c['display_name']} [{','.join(c.get('job_nodelist') or [])}] "
          f"run {c.get('time_run') or 0:.1f} s: {vals}" + (f" ({c['fail_reason']})" if c.get("fail_reason") else ""))
PY
}
for name in $SESSIONS; do
    args=(--distribute=all --repeat="$REPEAT")
    case $name in
        healthy-*) env=() ;;
        slow-gcn3) env=(GPUCOMM_TEST_SLOW_NODE=$SLOW) ;;
        retest-gcn3) env=(GPUCOMM_TEST_SLOW_NODE=$SLOW); args+=(-J=--nodelist=gcn3) ;;
        *) echo "unknown session $name"; exit 2 ;;
    esac
    phase "session $name: ${env[*]:-no hook} reframe ... ${args[*]}"
    s=$SECONDS
    env "${env[@]}" reframe -C config/settings.py --system ci:cluster -c checks/ --mode acceptance -n "$CHECKS" \
        "${args[@]}" -r -S sizes=8,1M -S iters=20 --prefix "$OUT/rfm-$name" --report-file "$OUT/$name.json" \
        >"$OUT/$name.log" 2>&1
    echo "rc=$? wall=$((SECONDS - s)) s"
    grep -aE 'PASSED|FAILED' "$OUT/$name.log" | tail -n 1
    summary "$OUT/$name.json" | tee "$OUT/$name.summary"
    # the payload's own records and output of every case (the report holds the perf values only)
    (cd "$OUT/rfm-$name" && find output -name gpucomm_results.json -o -name rfm_job.out -o -name rfm_job.err |
        tar czf "$OUT/$name-outputs.tgz" -T -)
    phase "verdict of the day on $name: gpucomm acceptance $name.json (defaults)"
    python3 -m gpucomm acceptance "$OUT/$name.json" --out "$OUT/verdict-$name" >"$OUT/verdict-$name.out" 2>&1
    echo "rc=$?" | tee -a "$OUT/verdict-$name.out"
    cat "$OUT/verdict-$name.out"
done
phase done
