#!/usr/bin/env bash
# Issue 56's "behaviour unchanged": the verdicts of committed real sessions by the tree before the
# analysis wing's moves (BEFORE, a commit) and by this one, compared file by file:
#   acceptance  `gpucomm acceptance` of the 4-node GPU cluster's sessions (51-gpu-cluster-acceptance:
#               3 healthy, 1 with ggn3 10 % slow; pooled, and the slow one alone)
#   nightly     `gpucomm report` of the 51-nightly nights 6 and 8 with their earlier nights as history:
#               the drift verdict's drift.csv, the health text and the exit code
# From the repository root (the venv in .venv):
#   bash bench/results/2026-12-05-cpu-2core/56-house/same-verdicts.sh OUT [BEFORE]
set -uo pipefail
OUT=${1:?OUT}; BEFORE=${2:-e0a102d}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
REPO=$PWD PY=$PWD/.venv/bin/python
A=$PWD/bench/results/2026-12-04-nvidia-h200/51-gpu-cluster-acceptance/call
N=$PWD/bench/results/2026-12-04-nvidia-h200/51-nightly/call/nights
git worktree add -q --detach "$OUT/before-tree" "$BEFORE" || exit 1
trap 'git -C "$REPO" worktree remove --force "$OUT/before-tree"' EXIT
judge() {  # judge TREE NAME: every verdict into OUT/NAME
    local src=$1/src out=$OUT/$2
    mkdir -p "$out"
    for s in pooled slow; do
        if [ $s = pooled ]; then set -- "$A"/node-healthy-{1,2,3}.json "$A"/node-slow-ggn3.json; else set -- "$A"/node-slow-ggn3.json; fi
        PYTHONPATH=$src "$PY" -m gpucomm acceptance "$@" --out "$out/acceptance-$s" >"$out/acceptance-$s.out" 2>&1
        echo "exit $?" >>"$out/acceptance-$s.out"
    done
    for n in 06 08; do
        hist=(); for h in "$N"/n*/report.json; do [[ $h < "$N/n$n/report.json" ]] && hist+=("$h"); done
        PYTHONPATH=$src "$PY" -m gpucomm report "$N/n$n/report.json" --history "${hist[@]}" -o "$out/night-$n" -q \
            --paper none --night-gap 0 >"$out/night-$n.out" 2>&1
        echo "exit $?" >>"$out/night-$n.out"
        rm -f "$out/night-$n"/*.png "$out/night-$n"/index.html "$out/night-$n"/.gpucomm-report
    done
}
judge "$OUT/before-tree" before
judge "$PWD" after
# the same files under their names of this tree (the report's nightly.csv is trend.csv now) and
# the output folders' own paths in the printed lines
for f in "$OUT"/before/night-*/nightly.csv; do mv "$f" "${f%nightly.csv}trend.csv"; done
sed -i "s|$OUT/before/|OUT/|g" "$OUT"/before/*.out; sed -i "s|$OUT/after/|OUT/|g" "$OUT"/after/*.out
cd "$OUT" && diff -r before after >diff.txt; echo "diff rc=$? ($(wc -l <diff.txt) lines): $OUT/diff.txt"
