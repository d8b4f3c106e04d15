#!/usr/bin/env bash
# Issue 52 on the GPU machine (kind nvidia-h200), one call: (1) the ipc-copy all-to-all after its
# single-peer change (52-ipc-device-driven/run2.sh: variants, then alternating host/stream
# launches until its budget); (2) health sessions of the merged tree as cron runs them (`gpucomm
# nightly --mode health`, the autodetected local system), each one's wall time and ReFrame's own,
# and every test case's `precision` (its perf variables' precision) summarised from report.json.
# From the repository root, as root, .whl/ carried:
#   bash bench/results/2026-12-05-nvidia-h200/52-health/run.sh OUT [SESSIONS [A2A_BUDGET_S [BUDGET_S]]]
set -uo pipefail
OUT=${1:?OUT}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
SESSIONS=${2:-4} A2A=${3:-100} BUDGET=${4:-400}
T0=$SECONDS
phase() { echo; echo "=== $* (t=$((SECONDS - T0)) s, $(date -u +%H:%M:%S) UTC)"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ "$A2A" -gt 0 ]; then  # A2A_BUDGET_S=0: health sessions only
    phase "all-to-all (run2.sh)"
    timeout -k 5 $((A2A + 40)) bash bench/results/2026-12-05-nvidia-h200/52-ipc-device-driven/run2.sh "$OUT/a2a" 10 "$A2A" 2>&1 | tail -n 60
fi
phase "device-env"
# shellcheck source=../../../device-env.sh
source bench/device-env.sh >"$OUT/device-env.log" 2>&1 ||
    { echo "device-env failed"; tail -n 5 "$OUT/device-env.log"; exit 1; }
set -uo pipefail
export RFM_ENABLE_RESULTS_STORAGE=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
for i in $(seq 1 "$SESSIONS"); do
    s=$(printf "s%02d" "$i")
    left=$((BUDGET - (SECONDS - T0)))
    if [ "$left" -lt 70 ]; then echo "no time left for session $s ($left s)"; break; fi
    phase "health session $s"
    t=$SECONDS
    timeout -s TERM -k 20 "$left" python3 -m gpucomm nightly --mode health --out "$OUT/nights/$s" \
        --night-gap 0 --prefix "$OUT/rfm/$s" >"$OUT/$s.log" 2>&1
    rc=$?
    echo "session $s: rc=$rc wall=$((SECONDS - t)) s" | tee -a "$OUT/$s.log"
    grep -aE '^gpucomm (nightly|health)|^nightly drift|^DRIFT FAIL|^SUSPECT|PASSED|FAILED|Finished|Started' "$OUT/$s.log" |
        cut -c1-300 | head -n 12
    rm -rf "$OUT/rfm/$s"
done
phase "precision in the reports"
python3 - "$OUT" <<'PY'
import glob, json, math, sys
rows = []
for path in sorted(glob.glob(f"{sys.argv[1]}/nights/s*/report.json")):
    rep = json.load(open(path))
    s = rep["session_info"]
    print(path.split("/")[-2], "reframe", s.get("time_start"), "->", s.get("time_end"), "elapsed", s.get("time_elapsed"))
    for run in rep["runs"][:1]:
        for tc in run["testcases"]:
            prec = tc.get("precision") or {}
            for var, p in sorted(prec.items()):
                rows.append((path.split("/")[-2], tc["display_name"].split(" @")[0], var, p.get("samples"),
                             p.get("stopped"), p.get("rel_se"), p.get("ci95")))
            print(f"  {tc['display_name'].split(' @')[0]}: {tc['result']}, {len(prec)} of "
                  f"{len(tc.get('perfvalues') or {})} perf variables with precision")
for r in rows:
    print(*r, sep="\t")
PY
tar czf "$OUT/sessions.tgz" -C "$OUT" nights $(cd "$OUT" && ls -d a2a 2>/dev/null) $(cd "$OUT" && ls s*.log) 2>/dev/null
phase "done"
