#!/usr/bin/env bash
# The drift rewrite's check (MANIFEST, "history"): the same generated nights judged by BEFORE
# (a commit, default e74f0bd) and by this tree. From the repository root (the venv in .venv):
#   bash bench/results/2026-12-05-cpu-2core/53-report-at-scale/same-drift.sh OUT [BEFORE]
set -euo pipefail
OUT=${1:?OUT}; BEFORE=${2:-e74f0bd}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
HERE=bench/results/2026-12-05-cpu-2core/53-report-at-scale
git worktree add -q --detach "$OUT/before-tree" "$BEFORE"
trap 'git worktree remove --force "$OUT/before-tree"' EXIT
.venv/bin/python "$HERE/same_drift.py" dump "$OUT/before-tree" "$OUT/before.pkl"
.venv/bin/python "$HERE/same_drift.py" dump "$PWD" "$OUT/after.pkl"
.venv/bin/python "$HERE/same_drift.py" compare "$OUT/before.pkl" "$OUT/after.pkl" | tee "$OUT/same-drift.out"
