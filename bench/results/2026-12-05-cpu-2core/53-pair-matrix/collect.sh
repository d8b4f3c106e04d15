#!/bin/bash
# Copies dryrun.sh's sample job scripts and a summary (test cases, time limits, perf variables per
# case, ReFrame's CPU) from OUT into this folder. Usage: collect.sh OUT
out=${1:?OUT}; here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$here/jobs"
{
for run in alps-one alps-groups leonardo-one leonardo-groups lumi-one lumi-groups; do
  log=$out/$run.log
  echo "== $run: $(tail -1 "$out/$run.time")"
  grep -E "PASSED|FAILED" "$log" | tail -1 | sed 's/\x1b\[[0-9;]*m//g'
  grep -E "SKIP" "$log" | grep -v "host buffers" | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-260 | head -2
  scripts=$(find "$out/$run/stage" -name rfm_job.sh 2>/dev/null)
  [ -n "$scripts" ] || continue
  echo "job scripts: $(echo "$scripts" | wc -l); time limits (count x limit, nodes):"
  for f in $scripts; do echo "$(grep -o 'time=[0-9:]*' "$f") nodes=$(grep -o 'nodes=[0-9]*' "$f" | head -1 | cut -d= -f2)"; done | sort | uniq -c
  echo "perf variables of one test case: $(awk '/OK|FAIL/{if (n) {print n; exit}} /^P: /{n++}' "$log")"
  for f in $(echo "$scripts" | xargs grep -l "method ccl" | head -2); do
    cp "$f" "$here/jobs/$run-$(basename "$(dirname "$f")").sh"
  done
done
} | sed "s|$out|OUT|g"
