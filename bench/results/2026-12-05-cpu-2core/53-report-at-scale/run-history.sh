#!/bin/bash
# gpucomm report of fleetsim's 1,024-node x 5-repeat session WITH the nightly drift's history
# (MANIFEST, "history"): NIGHTS sessions of every node (fleetsim seeds 10.., one day apart, the last
# with nid00003 7 % low on one variable), the newest judged against the others given with --history.
# From the repository root with the project's venv; OUT a new folder; NIGHTS 2 (one history night)
# or 8 (seven: every verdict rule in play).
#   [NODES=1024] bash bench/results/2026-12-05-cpu-2core/53-report-at-scale/run-history.sh OUT NIGHTS
set -eu
OUT=${1:?usage: run-history.sh OUT NIGHTS}; NIGHTS=${2:?NIGHTS}; NODES=${NODES:-1024}
PY=${PY:-python}
mkdir -p "$OUT"
for i in $(seq 0 $((NIGHTS - 1))); do
    slow=(); [ "$i" = $((NIGHTS - 1)) ] && slow=(--slow nid00003)
    PYTHONPATH=$PWD/src $PY -m gpucomm.analysis.fleetsim session --nodes "$NODES" --k 5 --seed $((10 + i)) \
        "${slow[@]}" --out "$OUT/n$i.json"
    # night i: (NIGHTS - 1 - i) days before the newest, a session id of its own
    $PY - "$OUT/n$i.json" $(( (NIGHTS - 1 - i) * 86400 )) "night-$i" <<'PY'
import json, sys
path, shift, uuid = sys.argv[1], int(sys.argv[2]), sys.argv[3]
d = json.load(open(path))
d["session_info"]["uuid"] = uuid
d["session_info"]["time_end_unix"] -= shift
for run in d["runs"]:
    for tc in run["testcases"]:
        if tc.get("job_completion_time_unix"):
            tc["job_completion_time_unix"] -= shift
json.dump(d, open(path, "w"))
PY
done
hist=(); for i in $(seq 0 $((NIGHTS - 2))); do hist+=("$OUT/n$i.json"); done
rc=0
PYTHONPATH=$PWD/src /usr/bin/time -v $PY -m gpucomm report "$OUT/n$((NIGHTS - 1)).json" --history "${hist[@]}" \
    -o "$OUT/report" -q > "$OUT/report.stdout" 2> "$OUT/report.time" || rc=$?
echo "report exit $rc"
grep -E "Elapsed|Maximum resident" "$OUT/report.time"
head -n 4 "$OUT/report.stdout"; grep -E "DRIFT|SUSPECT|more needed" "$OUT/report.stdout" | head -n 5
ls -l "$OUT/report/index.html"
