#!/usr/bin/env bash
# Issue 40 on the GPU machine (kind nvidia-h200), one call: bench/gpu-cluster.sh's 4-node cluster
# (namespace nodes ggn1-4, one H200 shared under MPS, 2 leaf switches), then
#   diag   why the host method inside a gpucluster node was slow (8 B ping-pong 7.4-9.2 us, the
#          bare machine 0.29 us): the payload's host ping-pong and all-reduce (2 ranks, 8 B and
#          1 MiB) bare (mpirun: shared memory, bound and unbound; TCP on lo) and under srun on
#          ggn1 (the partition's old btl self,tcp; self,sm,tcp; each rank pinned by taskset;
#          srun --cpu-bind=cores), and between ggn1 and ggn2 with sm allowed (must stay TCP),
#          every rank's Cpus_allowed_list and Open MPI's btl choice (bml/btl verbose) printed;
#   node   docs/acceptance.md step 1 x3 (the first, then the pairs, then the other two),
#          healthy: --mode acceptance --distribute=all --repeat=4, host ping-pong, host
#          all-reduce and NodeStateCheck, 8 B and 1 MiB, 20 iterations,
#          4 jobs at once (GPUCOMM_GPUCLUSTER_MAX_JOBS=4, each --exclusive on its node);
#   pairs  step 2: the node pair matrix (ccl, one rank on each node, rounds), --repeat=3,
#          healthy, then with ggn3's link shaped by tc to SHAPE (bench/gpu-cluster.sh ctl degrade);
# step 3 (gpucomm acceptance, pandas/scipy) runs where the reports come back.
# From the repository root, as root, .whl/ and .deb/ carried:
#   bash bench/results/2026-12-03-nvidia-h200/40-gpu-cluster-acceptance/run.sh OUT
set -uo pipefail
OUT=${1:?OUT}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd); export OUT
SHAPE=${SHAPE:-8gbit} NODE_REPEAT=${NODE_REPEAT:-4} PAIR_REPEAT=${PAIR_REPEAT:-3} NODE_SESSIONS=${NODE_SESSIONS:-3}
T0=$SECONDS
phase() { echo; echo "=== $* (t=$((SECONDS - T0)) s, $(date -u +%H:%M:%S) UTC)"; }
phase "device-env (the carried wheels)"
# shellcheck source=../../../device-env.sh
source bench/device-env.sh >"$OUT/device-env.log" 2>&1 ||
    { echo "device-env failed"; tail -n 5 "$OUT/device-env.log"; exit 1; }
set -uo pipefail
export RFM_ENABLE_RESULTS_STORAGE=n
bash bench/gpu-cluster.sh facts >"$OUT/facts.log" 2>&1
grep -E "machine|os:|MPS|GPU device" "$OUT/facts.log"
trap 'phase down; bash bench/gpu-cluster.sh down >"$OUT/down.out" 2>&1; tail -n 2 "$OUT/down.out"' EXIT
bash bench/gpu-cluster.sh up --nodes 4 || { echo "up failed"; tail -n 30 "$OUT/up.log"; exit 1; }
eval "$(bash bench/gpu-cluster.sh env)"
ompi_info 2>/dev/null | grep -E "Open MPI:|MCA btl:|MCA smsc:" | sed 's/^/  ompi_info: /'

# ------------------------------------------------------------------ diag (item 4)
phase "diag: the host method inside a node"
mkdir -p "$OUT/diag"
# the partition's environment (config/systems/gpucluster.py), less the btl (each variant sets it)
export OMPI_MCA_pml=ob1 OMPI_MCA_btl_tcp_if_include=eth0 SLURM_PMIX_FENCE=ring PMIX_MCA_psec=native
RANK_SH='echo "where: rank ${SLURM_PROCID:-${OMPI_COMM_WORLD_RANK:-?}} on $(hostname):" \
    "$(grep Cpus_allowed_list /proc/self/status | tr -s "\t " " ") btl=${OMPI_MCA_btl:-default} pin=${PIN:-none}"
[ -n "${PIN:-}" ] && exec taskset -c "$(( ${SLURM_LOCALID:-${OMPI_COMM_WORLD_LOCAL_RANK:-0}} * 2 + 4 ))" "$@"
exec "$@"'
one() {  # one LABEL OP BTL LAUNCHER...: one payload launch, 2 ranks, 8 B and 1 MiB, its result lines
    local label=$1 op=$2 btl=$3; shift 3
    local json="$OUT/diag/$label-$op.json" rc=0
    OMPI_MCA_btl=$btl timeout -k 5 40 "$@" sh -c "$RANK_SH" rank python3 -m gpucomm "$op" --method host \
        --sizes 8,1M --iters 500 --json "$json" >"$OUT/diag/$label-$op.out" 2>&1 || rc=$?
    grep -h "^where:" "$OUT/diag/$label-$op.out" | sort -u | sed "s/^/  $label $op /"
    python3 - "$json" "$label" "$op" "$rc" <<'PY'
import json, sys
path, label, op, rc = sys.argv[1:]
try:
    recs = {r["size"]: r for r in json.load(open(path))["results"]}
    print(f"diag: {label:22} {op:9} rc={rc} 8 B median {recs[8]['time_us']['median']:8.2f} us "
          f"(p05 {recs[8]['time_us']['p05']:.2f}, p95 {recs[8]['time_us']['p95']:.2f}); "
          f"1 MiB {recs[1048576]['goodput_GBps']:7.3f} GB/s, timed loop {recs[8].get('timed_loop', '?')}")
except Exception as exc:
    print(f"diag: {label:22} {op:9} rc={rc} no result ({type(exc).__name__}: {exc})")
PY
}
SRUN1=(srun -N1 -w ggn1 -n2 --mpi=pmix -t 2)
SRUN2=(srun -N2 -w ggn1,ggn2 --ntasks-per-node=1 --mpi=pmix -t 2)
BARE=(env OMPI_MCA_btl_tcp_if_include=lo mpirun -np 2)   # the machine itself, no Slurm
for rep in 1 2; do
    for op in pingpong allreduce; do
        one "slurm-tcp-$rep" "$op" self,tcp "${SRUN1[@]}"
        one "slurm-sm-$rep" "$op" self,sm,tcp "${SRUN1[@]}"
    done
done
for op in pingpong allreduce; do
    one bare-sm-bound "$op" self,sm,tcp "${BARE[@]}" --bind-to core
    one bare-sm-unbound "$op" self,sm,tcp "${BARE[@]}" --bind-to none
    one bare-tcp-lo "$op" self,tcp "${BARE[@]}" --bind-to core
    export PIN=1
    one slurm-tcp-taskset "$op" self,tcp "${SRUN1[@]}"
    one slurm-sm-taskset "$op" self,sm,tcp "${SRUN1[@]}"
    unset PIN
    one slurm-sm-cpubind "$op" self,sm,tcp srun -N1 -w ggn1 -n2 --mpi=pmix -t 2 --cpu-bind=cores
    one 2node-tcp "$op" self,tcp "${SRUN2[@]}"
    one 2node-sm-allowed "$op" self,sm,tcp "${SRUN2[@]}"
done
# which btl Open MPI takes to each peer (bml r2's "Using ... btl"), inside a node and across
for v in "1node ${SRUN1[*]}" "2node ${SRUN2[*]}"; do
    set -- $v
    label=$1; shift
    OMPI_MCA_btl=self,sm,tcp OMPI_MCA_bml_base_verbose=100 OMPI_MCA_btl_base_verbose=100 timeout -k 5 40 \
        "$@" python3 -m gpucomm pingpong --method host --sizes 8 --iters 20 >"$OUT/diag/verbose-$label.out" 2>&1
    echo "diag: verbose $label: $(grep -ciE 'btl' "$OUT/diag/verbose-$label.out") btl lines; peers:"
    grep -iE "Using .* btl|btl:.*(selected|select)" "$OUT/diag/verbose-$label.out" | sort | uniq -c |
        head -n 8 | sed 's/^/  /'
done
unset OMPI_MCA_pml OMPI_MCA_btl_tcp_if_include SLURM_PMIX_FENCE PMIX_MCA_psec

# ------------------------------------------------------------------ ReFrame sessions (5b)
summary() {  # REPORT: per case its result, node and values
    python3 - "$1" <<'PY'
import collections, json, sys
try:
    cases = json.load(open(sys.argv[1]))["runs"][0]["testcases"]
except Exception as exc:
    sys.exit(f"  no report {sys.argv[1]}: {exc}")
print("  cases:", dict(collections.Counter(c["result"] for c in cases)))
for c in cases:
    vals = " ".join(f"{k.split(':')[-1]}={v[0]:.4g}" for k, v in sorted((c.get("perfvalues") or {}).items()))
    reason = " ".join((c.get("fail_reason") or "").split())[:200]
    print(f"  {c['result']:5} {c['display_name']} [{','.join(c.get('job_nodelist') or [])}] "
          f"{c.get('time_run') or 0:.1f} s: {vals}" + (f" ({reason})" if reason else ""))
PY
}
rfm() {  # rfm NAME LIMIT_S ARGS...: one ReFrame session, its report, log, summary and outputs
    local name=$1 limit=$2 s=$SECONDS rc=0; shift 2
    timeout -s INT -k 20 "$limit" python3 "$(command -v reframe)" -C config/settings.py \
        --system gpucluster:gpu -c checks/ "$@" -r --prefix "$OUT/rfm-$name" --report-file "$OUT/$name.json" \
        >"$OUT/$name.log" 2>&1 || rc=$?
    echo "session $name: rc=$rc wall=$((SECONDS - s)) s; $(grep -aE 'PASSED|FAILED' "$OUT/$name.log" | tail -n 1)"
    summary "$OUT/$name.json" | tee "$OUT/$name.summary"
    (cd "$OUT/rfm-$name" 2>/dev/null && find output stage -name gpucomm_results.json \
        -o -name gpucomm_nodestate.json -o -name rfm_job.out -o -name rfm_job.err -o -name 'gpucomm_nccl_debug.*' |
        tar czf "$OUT/$name-outputs.tgz" -T -)
}
NODE_CHECKS='^(PingPongCheck|AllReduceCheck)%method=host$|^NodeStateCheck$'
node_session() {
    phase "node-healthy-$1: step 1, --distribute=all --repeat=$NODE_REPEAT, 4 jobs at once"
    GPUCOMM_GPUCLUSTER_MAX_JOBS=4 rfm "node-healthy-$1" 150 --mode acceptance --distribute=all \
        --repeat="$NODE_REPEAT" -n "$NODE_CHECKS" -S sizes=8,1M -S iters=20 -S exclusive_access=true \
        -S time_limit=100s
}
PAIRS=(--mode acceptance-network -n 'PairMatrixCheck%method=ccl' -S PairMatrixCheck.num_nodes=4
       -S PairMatrixCheck.ranks_per_node=1 -S sizes=8,1M -S perf_sizes=1M -S budget=0.3 -S time_limit=100s)
# the order keeps the most of it where the call's time runs out: one per-node session, both pair
# matrices, then the other per-node sessions
node_session 1
phase "pairs-healthy: step 2, the node pair matrix, --repeat=$PAIR_REPEAT"
rfm pairs-healthy 170 "${PAIRS[@]}" --repeat="$PAIR_REPEAT"
phase "pairs-ggn3-shaped: ggn3's link at $SHAPE (tc), --repeat=$PAIR_REPEAT"
bash bench/gpu-cluster.sh ctl degrade ggn3 "$SHAPE" 2>&1 | tee "$OUT/degrade.out"
ip netns exec ggn3 tc qdisc show dev eth0 | sed 's/^/  ggn3 eth0: /'
rfm pairs-ggn3-shaped 170 "${PAIRS[@]}" --repeat="$PAIR_REPEAT"
bash bench/gpu-cluster.sh ctl restore ggn3 2>&1 | tee -a "$OUT/degrade.out"
for i in $(seq 2 "$NODE_SESSIONS"); do node_session "$i"; done
phase "done"
