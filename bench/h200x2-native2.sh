#!/usr/bin/env bash
# Native tools on the 2-GPU node, second round: the native checks under ReFrame (OSU host,
# device and NCCL (xccl) benchmarks, nccl-tests), then raw outputs for tests/data: OSU 7.4 and
# nccl-tests -J JSON, launched with the local config's mpirun options (pml ucx + UCX preloaded:
# gpucomm.siteconf.local_mpirun_options).  Builds nothing: GPUCOMM_OSU_DIR (OSU 7.4 with
# CUDA and --enable-ncclomb) and GPUCOMM_NCCL_TESTS_DIR (nccl-tests, MPI=1) point at binaries
# built on the node.  Writes OUTDIR/{reframe-native.log,report-native.json,native2.log,
# walltimes.txt,outputs-native.tgz,raw-native2.tgz}.
# Usage (repository root, after `source bench/device-env.sh`): bench/h200x2-native2.sh OUTDIR
out=${1:?outdir}; mkdir -p "$out"; out=$(cd "$out" && pwd)
log="$out/native2.log"; raw=$(mktemp -d); start=$(date +%s)
: "${GPUCOMM_OSU_DIR:?set GPUCOMM_OSU_DIR}" "${GPUCOMM_NCCL_TESTS_DIR:?set GPUCOMM_NCCL_TESTS_DIR}"
{ nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader; mpirun --version | head -1
  echo "OSU: $GPUCOMM_OSU_DIR  nccl-tests: $GPUCOMM_NCCL_TESTS_DIR"; } > "$log" 2>&1

# (a) the native checks
python3 "$(command -v reframe)" -C config/settings.py -c checks/native.py -r -S iters=20 -S warmup=2 \
    --report-file "$out/report-native.json" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' > "$out/reframe-native.log"
echo "WALL reframe native: $(( $(date +%s) - start )) s" >> "$out/walltimes.txt"
grep -E "^\[ +(OK|FAIL|SKIP)|PASSED|FAILED" "$out/reframe-native.log" >> "$log"
tar czf "$out/outputs-native.tgz" output/ 2>/dev/null

# (b) raw outputs, one rank per GPU, the local config's mpirun options
mpiopts=$(python3 -c "from gpucomm.probe import node_info; from gpucomm.siteconf import local_mpirun_options as o; print(' '.join(o(node_info())))")
echo "mpirun options: $mpiopts" >> "$log"
osu() { find "$GPUCOMM_OSU_DIR" -name "$1" -type f | head -1; }
nt() { find "$GPUCOMM_NCCL_TESTS_DIR" -name "$1" -type f | head -1; }
run() {  # NAME PROGRAM ARGS...: stdout+stderr to raw/NAME.txt, 60 s at most
  local name=$1 exe; shift; exe=$1; shift
  if [ -z "$exe" ]; then echo "$name: binary not found" >> "$log"; return; fi
  local t0=$(date +%s)
  timeout 60 mpirun -np 2 $mpiopts "$exe" "$@" > "$raw/$name.txt" 2>&1
  echo "$name: rc=$? $(( $(date +%s) - t0 )) s: $exe $*" >> "$log"
}
it="-i 10 -x 2"
for b in latency bw bibw; do
  run osu7_${b}_host "$(osu osu_$b)" -m 1:4M $it -c
  run osu7_${b}_device "$(osu osu_$b)" -m 1:1G $it -c -d cuda D D
  run osu7_xccl_${b} "$(osu osu_xccl_$b)" -m 1:1G $it
done
for b in allreduce alltoall; do
  extra=""; [ $b = allreduce ] && extra="-T mpi_float"
  run osu7_${b}_host "$(osu osu_$b)" -m 8:16M $it -f -c $extra
  run osu7_xccl_${b} "$(osu osu_xccl_$b)" -m 8:1G $it -f -M 2147483648
done
for t in sendrecv all_reduce alltoall all_gather; do
  run nccl-tests_${t}_mpi "$(nt ${t}_perf)" -b 8 -e 1G -f 4 -g 1 -c 1 -n 20 -w 2 -J "$raw/nccl-tests_${t}_mpi.json"
done
tar czf "$out/raw-native2.tgz" -C "$raw" . && rm -rf "$raw"
echo "WALL total: $(( $(date +%s) - start )) s" >> "$out/walltimes.txt"
cat "$log" "$out/walltimes.txt"
