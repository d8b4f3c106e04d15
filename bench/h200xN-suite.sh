#!/usr/bin/env bash
# Issue 10, for a 4- or 8-GPU node (nvidia-h200-x4/-x8, withheld so far: never run yet): the
# topology, the pair matrix of every method (every ordered pair, one at a time and all disjoint
# pairs at once), all-reduce and all-to-all on every GPU for every method, the multi ping-pong
# with two groups of N/2 GPUs as nodes, the health mode, and ccl all-reduce against nccl-tests
# on the same GPUs when GPUCOMM_NCCL_TESTS_DIR points at a build (ext/build-nccl-tests.sh).
# NVLink SHARP stays off (NCCL_NVLS_ENABLE=0, set by bench/device-env.sh and the local config).
# Usage (repository root, after `source bench/device-env.sh`): bench/h200xN-suite.sh OUTDIR
out=${1:?outdir}; mkdir -p "$out/raw"; out=$(cd "$out" && pwd)
py=$(command -v python3)
rfm="$py $(command -v reframe) -C config/settings.py"
n=$(nvidia-smi -L | wc -l)
ms() { date +%s%N | cut -b1-13; }
step() {  # NAME REFRAME-ARGS...: one ReFrame session, timed, verdicts in the log
  local name=$1; shift; local t0=$(ms)
  echo "=== $name: reframe $*"
  timeout -k 5 240 $rfm "$@" --report-file "$out/raw/report-$name.json" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' \
    > "$out/raw/reframe-$name.log"
  grep -E "^\[ +(OK|FAIL|SKIP)|PASSED|FAILED|Reason" "$out/raw/reframe-$name.log"
  echo "wall_ms=$(( $(ms) - t0 ))"
}
{
echo "GPUs: $n"; nvidia-smi topo -m; nvidia-smi nvlink -s | head -40
step pairmatrix -c checks/pairmatrix.py -r -S sizes=8,1M,256M,1G
step collectives -c checks/collectives.py -r -S sizes=8,1M,64M,256M,1G -S budget=0.5
step multipingpong -c checks/internode.py -n MultiPingPongCheck -r -S emulate_nodes=y \
    -S "MultiPingPongCheck.ranks_per_node=$(( n / 2 ))" -S sizes=8,1M,64M,1G -S budget=0.5
step health -c checks/ --mode health -r
if [ -n "$GPUCOMM_NCCL_TESTS_DIR" ]; then
  timeout 200 $py bench/compare --out "$out/compare" --repeats 3 --only ccl-allreduce \
      --sizes 8,64M,256M,1G --iters 50 --warmup 5 --timeout 40 > "$out/raw/compare.log" 2>&1
  cat "$out/compare/compare.md"
fi
} 2>&1 | tee "$out/suite.log"
cp -r output "$out/raw/output"
tar czf "$out/raw.tgz" -C "$out" raw $( [ -d "$out/compare" ] && echo compare ) && rm -rf "$out/raw"
