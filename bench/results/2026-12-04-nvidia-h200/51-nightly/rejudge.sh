#!/usr/bin/env bash
# The committed nights of call/nights judged again by this tree's `gpucomm report` (CPU machine),
# each against the nights before it (--history, --night-gap 0, as gpucomm nightly ran it there);
# each night's exit code and drift lines into OUT (default rejudged/).
#   bash bench/results/2026-12-04-nvidia-h200/51-nightly/rejudge.sh [OUT]
set -u
HERE=$(cd "$(dirname "$0")" && pwd); OUT=${1:-$HERE/rejudged}; rm -rf "$OUT"; mkdir -p "$OUT"
N=$HERE/call/nights
before=()
for d in "$N"/n*; do
    n=$(basename "$d")
    python3 -m gpucomm report "$d/report.json" -o "$OUT/$n" -q --paper none --night-gap 0 \
        ${before[@]:+--history "${before[@]}"} >"$OUT/$n.out" 2>&1
    rc=$?
    echo "$n: exit $rc | $(grep -E '^nightly drift: [0-9]' "$OUT/$n.out")"
    grep -E '^(DRIFT FAIL|SUSPECT)' "$OUT/$n.out" | cut -c1-160 | head -n 4
    find "$OUT/$n" -name '*.png' -o -name index.html -o -name 'vs_*.csv' -o -name sweeps.csv -o -name inputs.csv | xargs rm -f
    before+=("$d/report.json")
done
