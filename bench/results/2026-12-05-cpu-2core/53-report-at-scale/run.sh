#!/bin/bash
# The timings of gpucomm report and gpucomm acceptance on fleetsim's 1,024-node x 5-repeat session
# (MANIFEST). Run from the repository root with the project's venv; OUT: a new folder.
set -eu
OUT=${1:?usage: run.sh OUT}
PY=${PY:-python}
mkdir -p "$OUT"
PYTHONPATH=$PWD/src nice -n 19 $PY -m gpucomm.analysis.fleetsim session --nodes 1024 --k 5 --seed 2 \
    --slow nid00017 --out "$OUT/report.json"
PYTHONPATH=$PWD/src nice -n 19 /usr/bin/time -v $PY -m gpucomm report "$OUT/report.json" -o "$OUT/report" \
    > "$OUT/report.stdout" 2> "$OUT/report.time" || true
PYTHONPATH=$PWD/src nice -n 19 /usr/bin/time -v $PY -m gpucomm acceptance "$OUT/report.json" --out "$OUT/acc" \
    > "$OUT/acceptance.stdout" 2> "$OUT/acceptance.time" || true
grep -E "Elapsed|Maximum resident" "$OUT"/*.time
ls -l "$OUT/report/index.html"
