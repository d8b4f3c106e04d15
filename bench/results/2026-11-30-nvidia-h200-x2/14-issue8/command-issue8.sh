#!/usr/bin/env bash
# Issue 8's acceptance in one device call on the 2-GPU node, after the changes that followed
# 11-tools2 (up to 5 iterations per sample above 1 MiB; ipc-copy point-to-point timed with
# device events; the host ping with its answer's receive posted first):
#  1. ipc-copy ping-pong, stream flags against the host handshake, beside the CE copy anchor;
#  2. bench/compare, every pair, 3 alternating repeats (the acceptance table);
#  3. two health-mode sessions against the shipped tolerances (the changes must keep them).
# Usage (repository root, after `source bench/device-env.sh` and `source bench/device-tools.sh`,
# .whl and ext/tools.tar.xz carried): bench/h200x2-issue8.sh OUTDIR
out=${1:?outdir}; mkdir -p "$out"; out=$(cd "$out" && pwd)
py=$(command -v python3); log="$out/issue8.log"; SECONDS=0
mpiopts=$($py -c "from gpucomm.probe import node_info; from gpucomm.siteconf import local_mpirun_options as o; print(' '.join(o(node_info())))")
{ date -u +%FT%TZ; nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader; git log --oneline -1; } > "$log" 2>&1
mkdir -p "$out/ipc"
timeout 30 $py bench/ce_copy.py --size 64M > "$out/ipc/ce_copy_64M.txt" 2>&1
for sync in stream host stream host; do
  GPUCOMM_IPC_SYNC=$sync timeout 40 mpirun -np 2 $mpiopts -x GPUCOMM_IPC_SYNC $py -m gpucomm pingpong --method ipc-copy \
      --sizes 8,64M,256M,1G >> "$out/ipc/pingpong-$sync.txt" 2>&1
  echo "ipc-copy sync=$sync rc=$?" >> "$log"
done
grep -h "timer=\|^ \+[0-9]" "$out"/ipc/pingpong-*.txt >> "$log"
echo "WALL ipc: $SECONDS s" >> "$log"
bench/compare-node.sh "$out" "$log"
echo "WALL compare: $SECONDS s" >> "$log"
for i in 1 2; do
  [ $SECONDS -gt 480 ] && { echo "health session $i not started: $SECONDS s used" >> "$log"; break; }
  timeout 90 $py "$(command -v reframe)" -C config/settings.py -c checks/ --mode health -r \
      --report-file "$out/report-health-$i.json" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' > "$out/reframe-health-$i.log"
  grep -E "^\[ +(PASSED|FAILED)|Reason|expected" "$out/reframe-health-$i.log" >> "$log"
done
echo "WALL total: $SECONDS s" >> "$log"
tar czf "$out/data.tgz" -C "$out" ipc compare compare-host compare.log reframe-health-*.log 2>/dev/null &&
  rm -rf "$out/ipc" "$out/compare" "$out/compare-host" "$out/compare.log" "$out"/reframe-health-*.log
cat "$log"
