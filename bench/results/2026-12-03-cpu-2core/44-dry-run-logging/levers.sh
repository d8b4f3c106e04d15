#!/bin/bash
# A paper-mode dry run of Alps (every check, 112 test cases) with the tests' ReFrame
# (tests/reframe_fast.py) with and without its logging lever (a record no handler takes is not
# filled; ReFrame's temporary debug file at the info level), alternated, ROUNDS times each;
# wall seconds, the test cases and the lines of ReFrame's temporary log file per run.
#   bench/results/2026-12-03-cpu-2core/44-dry-run-logging/levers.sh [ROUNDS]   (repository root, venv active)
set -u
ROUNDS=${1:-3}
export SBATCH_ACCOUNT=acct GPUCOMM_PYTHON=/x/bin/python RFM_RESOLVE_MODULE_CONFLICTS=n RFM_ENABLE_RESULTS_STORAGE=n
without='import reframe.core.logging as l; log, conf = l.LoggerAdapter.log, l.configure_logging; reframe_fast.install(); l.LoggerAdapter.log, l.configure_logging = log, conf'
with='reframe_fast.install()'
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$ROUNDS"); do
  for lever in without with; do
    d=$(mktemp -d); setup=${!lever}
    t0=$(date +%s.%N)
    python -c "import sys; sys.path.insert(0, 'tests'); import reframe_fast; $setup; from reframe.frontend.cli import main; sys.argv[0] = 'reframe'; sys.exit(main())" \
      -C config/settings.py --system alps -c checks/ --mode paper --dry-run --prefix "$d" --report-file "$d/r.json" > "$d/out" 2>&1
    t1=$(date +%s.%N)
    cases=$(python -c "import json; print(len(json.load(open('$d/r.json'))['runs'][0]['testcases']))")
    log=$(grep -o "/tmp/rfm-[a-z0-9_]*\.log" "$d/out" | tail -1)
    printf 'round %s %-7s %6.1f s  %s cases  %s log lines\n' "$round" "$lever" "$(echo "$t1 - $t0" | bc)" "$cases" "$(wc -l < "$log")"
    rm -rf "$d" "$log"
  done
done
echo "# load $(cut -d' ' -f1-3 /proc/loadavg)"
