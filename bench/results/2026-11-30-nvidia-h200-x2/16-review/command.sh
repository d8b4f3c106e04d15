#!/usr/bin/env bash
# After 15-issue8-bw, the MPI ping, answer and exchange became one ordering (the timed loop's:
# send started first; send_then_recv = one iteration of ping_loop): the paths it touches on the
# 2-GPU node, host and GPU-aware MPI: ping-pong at 8 B and 64 MiB, the pair matrix (both modes),
# bw, then one health session against the shipped tolerances.
# Usage (repository root, after `source bench/device-env.sh`, .whl carried): bench/h200x2-review.sh OUTDIR
out=${1:?outdir}; mkdir -p "$out"; out=$(cd "$out" && pwd)
py=$(command -v python3); log="$out/review.log"; SECONDS=0
mpiopts=$($py -c "from gpucomm.probe import node_info; from gpucomm.siteconf import local_mpirun_options as o; print(' '.join(o(node_info())))")
{ date -u +%FT%TZ; nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader; } > "$log" 2>&1
for op in pingpong pair-matrix bw; do
  for m in host gpu-aware-mpi staging; do
    timeout 60 mpirun -np 2 $mpiopts $py -m gpucomm $op --method $m --sizes 8,64M > "$out/$op-$m.txt" 2>&1
    echo "$op $m rc=$?" >> "$log"
    grep -h "^#.*timer=\|^ \+[0-9a-z]" "$out/$op-$m.txt" >> "$log"
  done
done
echo "WALL payload: $SECONDS s" >> "$log"
timeout 90 $py "$(command -v reframe)" -C config/settings.py -c checks/ --mode health -r \
    --report-file "$out/report-health.json" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' > "$out/reframe-health.log"
grep -E "^\[ +(PASSED|FAILED)|Reason|expected" "$out/reframe-health.log" >> "$log"
echo "WALL total: $SECONDS s" >> "$log"
tar czf "$out/data.tgz" -C "$out" $(cd "$out" && ls *.txt) reframe-health.log && rm -f "$out"/*.txt "$out/reframe-health.log"
cat "$log"
