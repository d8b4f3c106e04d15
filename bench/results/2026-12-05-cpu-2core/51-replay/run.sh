#!/usr/bin/env bash
# The verdicts replayed on the committed healthy sessions (bench/replay.py's docstring); from the
# repository root: bash bench/results/2026-12-05-cpu-2core/51-replay/run.sh OUT
set -euo pipefail
OUT=${1:?OUT}
mkdir -p "$OUT"
R="python bench/replay.py"
$R fleet "$OUT" --pool x2 --nodes 4,6 --k 3,5 --trials 150
$R fleet "$OUT" --pool x2 --nodes 16 --k 3,5 --trials 80
$R fleet "$OUT" --pool x2 --nodes 64 --k 3,5 --trials 30
$R fleet "$OUT" --pool x2 --nodes 16 --k 5 --trials 60 --class
$R fleet "$OUT" --pool gpucluster --nodes 4 --k 3,5 --trials 100
$R fleet "$OUT" --pool cicluster --nodes 4 --k 3,5 --trials 60
$R nights "$OUT" --pool x2 --trials 150
$R nights "$OUT" --pool x2 --trials 150 --within-call
$R table "$OUT" > "$OUT/TABLE.md"
