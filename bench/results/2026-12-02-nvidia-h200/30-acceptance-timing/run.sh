#!/usr/bin/env bash
# Issue 30's timing on one GPU (kind nvidia-h200) and issue 31's kill -9 on a GPU node:
# ReFrame's acceptance mode as a site runs it (no -S), timed; gpucomm acceptance over that one
# node's session (fewer than 3 nodes: no fleet); the pair matrix in rounds only (--pairs rounds,
# ccl, two ranks with their own NCCL host identities on the one GPU); reframe killed with -9
# mid-run under the local scheduler, no time limit: no payload rank left.  From the repository
# root, .whl carried:
#   bash bench/results/2026-12-02-nvidia-h200/30-acceptance-timing/run.sh OUT
set -uo pipefail
OUT=${1:?OUT}
mkdir -p "$OUT/w"
t0=$SECONDS
phase() { echo; echo "=== $* (t=$((SECONDS - t0)) s)"; }
source bench/device-env.sh || exit 1
W=$OUT/w
phase "ReFrame acceptance mode, as documented (docs/acceptance.md step 1, one node)"
s=$SECONDS
reframe -C config/settings.py -c checks/ --mode acceptance -r --report-file "$W/acceptance.json" >"$OUT/acceptance.log" 2>&1
echo "rc=$? wall=$((SECONDS - s)) s"
grep -aE 'PASSED|FAILED|\[ +(OK|FAIL) +\]' "$OUT/acceptance.log" | tail -n 30
python3 - "$W/acceptance.json" <<'PY'
import json, sys, collections
cases = json.load(open(sys.argv[1]))["runs"][0]["testcases"]
by = collections.Counter(c["result"] for c in cases)
print("cases:", dict(by))
for c in cases:
    if c["result"] != "skip":
        print(f"  {c['result']:5} {c['display_name']}: {c.get('time_total') or 0:.1f} s")
skips = collections.Counter((c.get("fail_reason") or "")[:90] for c in cases if c["result"] == "skip")
for reason, n in skips.most_common(5):
    print(f"  skip x{n}: {reason}")
PY
phase "gpucomm acceptance over the one-node session"
python3 -m gpucomm acceptance "$W/acceptance.json" --out "$W/verdict"; echo "rc=$?"
ls "$W/verdict" 2>/dev/null
phase "pair matrix, rounds only: ccl, two ranks (own NCCL host identities) on the one GPU"
timeout 150 mpirun -np 2 --bind-to none bash -c 'NCCL_HOSTID=gcn$OMPI_COMM_WORLD_RANK exec python3 -m gpucomm "$@"' _ \
    pair-matrix --method ccl --sizes 8,1M,64M --pairs rounds --allow-shared-gpu --json "$W/pm-rounds.json" 2>&1 \
    | grep -v '^GPUCOMM-' | tail -n 8; echo "rc=$?"
phase "kill -9 of reframe mid-run, local scheduler, -S time_limit=0"
P=$W/killed
GPUCOMM_TEST_HANG=1:8 reframe -C config/settings.py -c checks/ -n '^PingPongCheck%method=host' -S sizes=8 \
    -S time_limit=0 -r --prefix "$P" >"$OUT/killed.log" 2>&1 &
rfm=$!
ranks() { for p in $(pgrep -f 'gpucomm pingpong' || true); do
    case "$(readlink /proc/$p/cwd 2>/dev/null)" in "$P"*) echo "$p";; esac; done; }
for i in $(seq 1 120); do [ "$(ranks | wc -l)" -ge 2 ] && break; sleep 0.5; done
echo "ranks running before: $(ranks | tr '\n' ' ')"
grep -h GPUCOMM_WATCH_PID "$P"/stage/*/*/*/*/rfm_job.sh 2>/dev/null | head -1
sleep 1; kill -9 "$rfm"; wait "$rfm" 2>/dev/null
sleep 3; left=$(ranks | tr '\n' ' ')
echo "ranks left 3 s after kill -9: ${left:-none}"
grep -h "is gone" "$P"/stage/*/*/*/*/rfm_job.err 2>/dev/null | head -2
[ -n "$left" ] && kill -9 $left
(cd "$OUT" && tar czf records.tgz w && rm -rf w)
phase done
