#!/usr/bin/env bash
# Issue 28's two main levers, each measured alone on the idle CPU machine (2 cores), from the
# repository root with the README's .venv:
#   1. a paper-mode dry run of Alps (every check): ReFrame as installed, then the tests' ReFrame
#      (reframe_helpers._MAIN: tests/reframe_fast.py), 3 runs each, wall seconds;
#   2. tests/payload/test_payload.py on the CI's 3 workers with Open MPI's mpi_yield_when_idle
#      0 then 1 (tests/conftest.py sets 1): pytest's wall and the CPU seconds of every test
#      (GPUCOMM_TEST_TIMELINE, .ci/timeline.py).
#   bash bench/results/2026-12-02-cpu-2core/28-ci-under-10/levers.sh OUT
set -uo pipefail
OUT=${1:?OUT}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
export RFM_RESOLVE_MODULE_CONFLICTS=n RFM_ENABLE_RESULTS_STORAGE=n SBATCH_ACCOUNT=gpucomm_test
MAIN=$(cd tests && ../.venv/bin/python -c 'import reframe_helpers; print(reframe_helpers._MAIN)')
dry() {  # LABEL CMD...: one dry run, its wall seconds and test-case count
    rm -rf "$OUT/p"; s=$(date +%s.%N)
    "${@:2}" -C config/settings.py --system alps -c checks/ --mode paper --dry-run --prefix "$OUT/p" \
        --report-file "$OUT/p/r.json" >/dev/null 2>&1; rc=$?
    echo "$1 rc=$rc wall=$(echo "$(date +%s.%N) - $s" | bc) s cases=$(python3 -c "import json; print(len(json.load(open('$OUT/p/r.json'))['runs'][0]['testcases']))")"
}
echo "=== 1. paper-mode dry run of alps"
for i in 1 2 3; do dry "installed" .venv/bin/reframe; done
for i in 1 2 3; do dry "tests'" .venv/bin/python -c "$MAIN"; done
echo "=== 2. tests/payload/test_payload.py, -n 3"
for y in 0 1; do
    rm -f "$OUT/t$y.jsonl"
    s=$(date +%s.%N)
    OMPI_MCA_mpi_yield_when_idle=$y GPUCOMM_TEST_TIMELINE="$OUT/t$y.jsonl" .venv/bin/python -m pytest -q -n 3 \
        -p no:cacheprovider tests/payload/test_payload.py 2>&1 | grep -E "passed|failed"
    echo "mpi_yield_when_idle=$y: wall $(echo "$(date +%s.%N) - $s" | bc) s"
    python3 .ci/timeline.py "$OUT/t$y.jsonl" 3 | grep -A1 "CPU seconds"
done
rm -rf "$OUT/p"
