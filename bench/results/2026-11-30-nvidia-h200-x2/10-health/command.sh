#!/usr/bin/env bash
# Issue 9 on the 2-GPU node: two more injected faults under ReFrame (both ranks bound to one GPU
# by a binding bug; CUDA IPC refused), then the tolerance study: the health mode (every
# HealthCheck sweep and the pair matrix) run back to back, each session timed and reported;
# bench/tolerances.py turns the reports into the shipped tolerances.
# Usage (repository root, after `source bench/device-env.sh`): bench/h200x2-health10.sh OUTDIR [RUNS] [SECONDS]
# (no new session starts once SECONDS, default 380, would be exceeded by one more; FAULTS=0
# skips the two injected faults)
out=${1:?outdir}; runs=${2:-10}; limit=${3:-380}; mkdir -p "$out/reports"; out=$(cd "$out" && pwd)
py=$(command -v python3)
rfm="$py $(command -v reframe) -C config/settings.py"
ms() { date +%s%N | cut -b1-13; }
start=$(ms)
: > "$out/health.log"
faults() {
echo "=== binding bug: both ranks on GPU 0 (GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,0)"
GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,0 timeout 90 $rfm -c checks/pairmatrix.py -n 'PairMatrixCheck%method=ccl' -r \
    -S "python=$PWD/config/bin/gpucomm-bind $py" -S time_limit=60s --report-file "$out/reports/report-shared-gpu.json" 2>&1 \
    | sed 's/\x1b\[[0-9;]*m//g' | grep -E "^\[ +(OK|FAIL|SKIP)|PASSED|FAILED|Reason"
echo "=== CUDA IPC refused on rank 1 (GPUCOMM_TEST_IPC_REFUSED=1)"
GPUCOMM_TEST_IPC_REFUSED=1 timeout 90 $rfm -c checks/pairmatrix.py -n 'PairMatrixCheck%method=ipc-copy' -r -S time_limit=60s \
    --report-file "$out/reports/report-ipc-refused.json" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | grep -E "^\[ +(OK|FAIL|SKIP)|PASSED|FAILED|Reason"
}
[ "${FAULTS:-1}" = 0 ] || faults 2>&1 | tee "$out/health.log"
study=$(ms); last=0
for i in $(seq 1 "$runs"); do
  now=$(( $(ms) - study ))
  if [ $(( now + last )) -gt $(( limit * 1000 )) ]; then echo "run $i not started: ${now} ms used, the last took ${last} ms" | tee -a "$out/health.log"; break; fi
  t0=$(ms)
  timeout 120 $rfm -c checks/ --mode health -r --report-file "$out/reports/report-health-$i.json" 2>&1 \
      | sed 's/\x1b\[[0-9;]*m//g' > "$out/reports/reframe-health-$i.log"
  rc=${PIPESTATUS[0]}; last=$(( $(ms) - t0 ))
  echo "run $i: rc=$rc wall_ms=$last $(grep -E '^\[ +(PASSED|FAILED) +\]' "$out/reports/reframe-health-$i.log")" | tee -a "$out/health.log"
done
grep -hE "^\[ +FAIL|FAILURE INFO|Reason|expected" "$out"/reports/reframe-health-*.log | head -40 >> "$out/health.log"
cp -r output "$out/reports/output-last"
tar czf "$out/reports.tgz" -C "$out" reports && rm -rf "$out/reports"
echo "total: $(( $(ms) - start )) ms" >> "$out/health.log"
