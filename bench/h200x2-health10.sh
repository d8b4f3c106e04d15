#!/usr/bin/env bash
# Issue 9's tolerance study: the health mode (every HealthCheck sweep and the pair matrix) run
# back to back on the healthy 2-GPU node, each session timed; bench/tolerances.py turns the
# reports into the shipped tolerances.
# Usage (repository root, after `source bench/device-env.sh`): bench/h200x2-health10.sh OUTDIR [RUNS]
out=${1:?outdir}; runs=${2:-10}; mkdir -p "$out/reports"; out=$(cd "$out" && pwd)
py=$(command -v python3)
ms() { date +%s%N | cut -b1-13; }
start=$(ms)
for i in $(seq 1 "$runs"); do
  if [ $(( $(ms) - start )) -gt 500000 ]; then echo "run $i not started: 500 s used" | tee -a "$out/health.log"; break; fi
  t0=$(ms)
  timeout 120 $py "$(command -v reframe)" -C config/settings.py -c checks/ --mode health -r \
      --report-file "$out/reports/report-health-$i.json" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' > "$out/reports/reframe-health-$i.log"
  rc=${PIPESTATUS[0]}
  echo "run $i: rc=$rc wall_ms=$(( $(ms) - t0 )) $(grep -E '^\[ +(PASSED|FAILED) +\]' "$out/reports/reframe-health-$i.log")" | tee -a "$out/health.log"
done
grep -hE "^\[ +FAIL|FAILURE INFO|Reason|reason" "$out"/reports/reframe-health-*.log | head -40 >> "$out/health.log"
cp -r output "$out/reports/output-last"
tar czf "$out/reports.tgz" -C "$out" reports && rm -rf "$out/reports"
