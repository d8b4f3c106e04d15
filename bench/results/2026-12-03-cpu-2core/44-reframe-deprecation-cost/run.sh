#!/usr/bin/env bash
# The cost of ReFrame's ignored deprecation warnings (src/gpucomm/rfm/quickwarn.py): a dry run of
# every check on each site, REPS times with ReFrame's own user_deprecation_warning (a stand-in
# quickwarn module whose install does nothing, in sys.modules before gpucomm.rfm is imported) and REPS times with quickwarn's; the job
# scripts of the two compared byte for byte (the prefix replaced); one profile of each kind
# (cProfile: calls of user_deprecation_warning and inspect.stack, cumulative seconds).
# From the repository root, the venv in .venv:
#   bash bench/results/2026-12-03-cpu-2core/44-reframe-deprecation-cost/run.sh OUT [REPS]
set -uo pipefail
OUT=${1:?OUT}; REPS=${2:-3}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
export RFM_CONFIG_FILES=$PWD/config/settings.py SBATCH_ACCOUNT=g123 RFM_ENABLE_RESULTS_STORAGE=n
PY=$PWD/.venv/bin/python
run() {  # KIND SYSTEM PREFIX [profile]: one dry run
    local pre=""
    # ReFrame's own: a stand-in quickwarn whose install does nothing, in place before gpucomm.rfm loads
    [ "$1" = reframe ] && pre="import sys, types; q = types.ModuleType('gpucomm.rfm.quickwarn'); \
q.install = lambda: None; sys.modules[q.__name__] = q; "
    local main="${pre}import sys; from reframe.frontend.cli import main; sys.argv[0] = 'reframe'; main()"
    if [ "${4:-}" = profile ]; then
        "$PY" -c "import cProfile, sys; sys.argv = ['reframe'] + sys.argv[1:]; cProfile.run(\"$main\", '$3.prof')" \
            --system "$2" -c checks/ --dry-run --prefix "$3" >"$3.log" 2>&1
    else
        "$PY" -c "$main" --system "$2" -c checks/ --dry-run --prefix "$3" >"$3.log" 2>&1
    fi
}
echo "date $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) load $(cut -d' ' -f1-3 /proc/loadavg) cpus $(nproc)"
for sys in alps leonardo lumi; do
    for kind in reframe quickwarn; do
        for i in $(seq 1 "$REPS"); do
            s=$(date +%s.%N); run "$kind" "$sys" "$OUT/$sys-$kind-$i"; rc=$?; e=$(date +%s.%N)
            echo "$sys $kind run $i: rc=$rc wall $(echo "$e - $s" | bc) s, $(grep -ac 'DRY' "$OUT/$sys-$kind-$i.log") dry-run cases"
        done
    done
    n=0; d=0
    for f in $(cd "$OUT/$sys-reframe-1" && find stage -name '*.sh' | sort); do
        n=$((n + 1))
        cmp -s <(sed "s#$OUT/$sys-reframe-1#P#g" "$OUT/$sys-reframe-1/$f") \
               <(sed "s#$OUT/$sys-quickwarn-1#P#g" "$OUT/$sys-quickwarn-1/$f") || { d=$((d + 1)); echo "  differs: $f"; }
    done
    echo "$sys: $n job scripts compared, $d differ"
done
for kind in reframe quickwarn; do
    run "$kind" alps "$OUT/profile-$kind" profile
    "$PY" - "$OUT/profile-$kind.prof" "$kind" <<'PY'
import pstats, sys
st = pstats.Stats(sys.argv[1]).stats
tot = max(v[3] for v in st.values())
for (f, line, name), (cc, nc, tt, ct, _) in sorted(st.items()):
    if name in ("user_deprecation_warning", "stack") and ("warnings" in f or "inspect" in f or "quickwarn" in f):
        print(f"profile alps {sys.argv[2]}: {name} ({f.split('/')[-1]}:{line}) {nc} calls, {ct:.1f} s of {tot:.1f} s")
PY
done
rm -rf "$OUT"/*/ "$OUT"/*.prof
