#!/usr/bin/env bash
# Issue 52 on the GPU machine (kind nvidia-h200), one call: docs/acceptance.md step 1 on this one
# node as a site runs it (`--mode acceptance`, no -S) with ReFrame's --repeat, ReFrame's own
# times per test case and repeat, every perf variable's `precision` (samples, what stopped the
# sampling, rel_se) from the session report, then `gpucomm acceptance` over it.
# From the repository root, .whl carried:
#   bash bench/results/2026-12-05-nvidia-h200/52-acceptance/run.sh OUT [REPEAT [BUDGET_S]]
set -uo pipefail
OUT=${1:?OUT}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
REPEAT=${2:-2} BUDGET=${3:-480}
T0=$SECONDS
phase() { echo; echo "=== $* (t=$((SECONDS - T0)) s, $(date -u +%H:%M:%S) UTC)"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
phase "device-env"
# shellcheck source=../../../device-env.sh
source bench/device-env.sh >"$OUT/device-env.log" 2>&1 ||
    { echo "device-env failed"; tail -n 5 "$OUT/device-env.log"; exit 1; }
set -uo pipefail
export RFM_ENABLE_RESULTS_STORAGE=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
phase "acceptance --repeat=$REPEAT"
s=$SECONDS
timeout -s TERM -k 20 $((BUDGET - (SECONDS - T0))) reframe -C config/settings.py -c checks/ --mode acceptance \
    --repeat="$REPEAT" -r --prefix "$OUT/rfm" --report-file "$OUT/acceptance.json" >"$OUT/acceptance.log" 2>&1
echo "reframe rc=$? wall=$((SECONDS - s)) s"
grep -aE 'PASSED|FAILED' "$OUT/acceptance.log" | tail -n 5
phase "ReFrame's times and each perf variable's precision"
python3 - "$OUT/acceptance.json" <<'PY'
import collections, json, statistics, sys
rep = json.load(open(sys.argv[1]))
s = rep["session_info"]
print("session", s.get("time_start"), "->", s.get("time_end"), "elapsed", s.get("time_elapsed"))
cases = [c for run in rep["runs"] for c in run["testcases"]]
print("cases:", dict(collections.Counter(c["result"] for c in cases)))
per = collections.defaultdict(list)
for c in cases:
    if c["result"] != "skip":
        per[c["display_name"].split(" %repeat_no")[0].split(" @")[0]].append(c.get("time_total") or 0)
for name, ts in sorted(per.items()):
    print(f"  {name}: {len(ts)} cases, {statistics.median(ts):.1f} s median, {sum(ts):.1f} s in all")
print("time_total of every case:", round(sum(sum(t) for t in per.values()), 1), "s")
stops = collections.Counter()
rel = []
for c in cases:
    for var, p in (c.get("precision") or {}).items():
        stops[p.get("stopped")] += 1
        if p.get("rel_se") is not None:
            rel.append((p["rel_se"], c["display_name"].split(" @")[0], var, p.get("samples"), p.get("stopped")))
print("precision: stopped by", dict(stops))
rel.sort()
for r in rel[-12:]:
    print("  widest rel_se %.4f %s %s samples=%s stopped=%s" % r)
PY
phase "gpucomm acceptance"
python3 -m gpucomm acceptance "$OUT/acceptance.json" --out "$OUT/verdict" 2>&1 | tail -n 15; echo "rc=$?"
rm -rf "$OUT/rfm/stage"
tar czf "$OUT/acceptance.tgz" -C "$OUT" acceptance.json acceptance.log verdict rfm/output 2>/dev/null
phase "done"
