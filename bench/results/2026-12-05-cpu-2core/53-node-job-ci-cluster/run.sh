#!/usr/bin/env bash
# Issue 53's per-node acceptance job for real on the CI's 4-node CPU cluster (.ci/cluster-up.sh
# --nodes 4 --leaves 2 --inter-switch-rate 50mbit: 4 namespace nodes gcn1-4 on the 2-core machine,
# ci:cluster, max_jobs 1: the jobs one after the other): docs/acceptance.md step 1b,
#   reframe --mode acceptance-node --distribute=all --repeat=5
#     -S NodeAcceptanceCheck.checks='^(PingPongCheck|AllReduceCheck)%method=host$'
#     -S sizes=8,1M -S iters=20
# one job per node and repeat (4 x 5 = 20 a session), each running the host ping-pong and the host
# all-reduce of its node in turn (2 ranks, TCP), with acceptance's soak; the sessions:
#   healthy-1, healthy-2  the cluster as it is
#   slow-gcn3     GPUCOMM_TEST_SLOW_NODE=gcn3:1.1 exported to ReFrame (sbatch --export=ALL, srun):
#                 every timed sample on gcn3 10 % longer (a busy wait, payload/faults.py)
#   slow2-gcn3    the same at gcn3:2 (2x): 10 % is inside this machine's noise (README)
#   corrupt-gcn2  only the ping-pong, only on gcn2, gets GPUCOMM_TEST_CORRUPT=1:8 (rank 1's
#                 received 8 B damaged): -S PingPongCheck.prerun_cmds=... a shell line of the
#                 ping-pong's own block that exports it where the job's host is gcn2; the
#                 all-reduce of gcn2 and every check of the other nodes run as they are
# after each, `gpucomm acceptance SESSION.json --out verdict-SESSION` (defaults): its exit code,
# drain.csv and pass.csv.  Per session: the ReFrame report (NAME.json), its log (NAME.log), a
# summary (NAME.summary: per node job its result, node, ReFrame's times, inner statuses).
# From the repository root, as root, the CI cluster down, the venv of /work/main (or PY=...):
#   bash bench/results/2026-12-05-cpu-2core/53-node-job-ci-cluster/run.sh OUT [SESSION...]
set -uo pipefail
OUT=${1:?OUT}; shift; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
SESSIONS=${*:-healthy-1 healthy-2 slow-gcn3 slow2-gcn3 corrupt-gcn2}
VENV=${VENV:-/work/main/.venv}
export PATH="$VENV/bin:$PATH:/usr/local/sbin:/usr/sbin:/sbin" PYTHONPATH="$PWD/src"
export SLURM_CONF=/tmp/gpucomm-cluster/slurm.conf RFM_ENABLE_RESULTS_STORAGE=n
unset GPUCOMM_TEST_SLOW_NODE GPUCOMM_TEST_CORRUPT
REPEAT=5
CHECKS='^(PingPongCheck|AllReduceCheck)%method=host$'
CORRUPT_LINE='[ "$(hostname -s)" != gcn2 ] || export GPUCOMM_TEST_CORRUPT=1:8'
exec > >(tee -a "$OUT/run.log") 2>&1
t0=$SECONDS
phase() { echo; echo "=== $* (t=$((SECONDS - t0)) s, $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg))"; }
git log -1 --format='commit %H' 2>/dev/null || true
trap 'phase down; bash .ci/cluster-down.sh >"$OUT/cluster-down.log" 2>&1' EXIT
phase "cluster up"
bash .ci/cluster-up.sh --nodes 4 --leaves 2 --inter-switch-rate 50mbit >"$OUT/cluster-up.log" 2>&1 ||
    { echo "cluster-up failed"; tail "$OUT/cluster-up.log"; exit 1; }
sinfo
summary() {  # REPORT: per node job its result, node, repeat, ReFrame's times and inner statuses
    python3 - "$1" <<'PY'
import collections, json, statistics, sys
try:
    cases = json.load(open(sys.argv[1]))["runs"][0]["testcases"]
except Exception as exc:
    sys.exit(f"  no report: {exc}")
print("node jobs:", dict(collections.Counter(c["result"] for c in cases)))
times = collections.defaultdict(list)
for c in cases:
    for k in ("time_setup", "time_run", "time_sanity", "time_performance", "time_total"):
        times[k].append(c.get(k) or 0.0)
    print(f"  {c['result']:5} {c['display_name']} [{','.join(str(n) for n in c.get('job_nodelist') or [])}] "
          f"setup {c.get('time_setup') or 0:.2f} s, run {c.get('time_run') or 0:.1f} s, "
          f"sanity {c.get('time_sanity') or 0:.2f} s, perf {c.get('time_performance') or 0:.2f} s, "
          f"total {c.get('time_total') or 0:.1f} s")
    for name, status in (c.get("node_checks") or {}).items():
        vals = " ".join(f"{k.split(':')[-1]}={v[0]:.4g}" for k, v in sorted((c.get("perfvalues") or {}).items())
                        if f":{name}:" in k)
        print(f"      {name}: {status}: {vals}")
    if c.get("fail_reason"):
        print(f"      fail_reason: {c['fail_reason'].splitlines()[0]}")
print("ReFrame's time per node job (median, min-max over the session's jobs):")
for k, v in times.items():
    print(f"  {k}: {statistics.median(v):.2f} s ({min(v):.2f}-{max(v):.2f})")
PY
}
for name in $SESSIONS; do
    args=(--distribute=all --repeat="$REPEAT")
    case $name in
        healthy-*) env=() ;;
        slow-gcn3) env=(GPUCOMM_TEST_SLOW_NODE=gcn3:1.1) ;;
        slow2-gcn3) env=(GPUCOMM_TEST_SLOW_NODE=gcn3:2) ;;
        corrupt-gcn2) env=(); args+=(-S "PingPongCheck.prerun_cmds=$CORRUPT_LINE") ;;
        *) echo "unknown session $name"; exit 2 ;;
    esac
    phase "session $name: ${env[*]:-no hook} reframe --mode acceptance-node ${args[*]}"
    s=$SECONDS
    env "${env[@]}" reframe -C config/settings.py --system ci:cluster -c checks/ --mode acceptance-node \
        -S "NodeAcceptanceCheck.checks=$CHECKS" "${args[@]}" -r -S sizes=8,1M -S iters=20 \
        --keep-stage-files --prefix "$OUT/rfm-$name" --report-file "$OUT/$name.json" >"$OUT/$name.log" 2>&1
    echo "rc=$? wall=$((SECONDS - s)) s"
    grep -aE 'acceptance plan|PASSED|FAILED' "$OUT/$name.log" | tail -n 3
    summary "$OUT/$name.json" | tee "$OUT/$name.summary"
    # every node job's script, output, status file and inner checks' output (not the payload's records)
    (cd "$OUT/rfm-$name/stage" && find . \( -name 'rfm_job.*' -o -name gpucomm_node_checks.txt \) |
        tar czf "$OUT/$name-jobs.tgz" -T -)
    phase "verdict on $name: gpucomm acceptance $name.json (defaults)"
    python3 -m gpucomm acceptance "$OUT/$name.json" --out "$OUT/verdict-$name" >"$OUT/verdict-$name.out" 2>&1
    echo "rc=$?" | tee -a "$OUT/verdict-$name.out"
    cat "$OUT/verdict-$name.out"
    for f in drain pass; do
        [ -f "$OUT/verdict-$name/$f.csv" ] && { echo "--- $f.csv"; cat "$OUT/verdict-$name/$f.csv"; }
    done
    rm -rf "$OUT/rfm-$name"
done
phase done
