#!/usr/bin/env bash
# Issue 8, second device call on the 2-GPU node (after 14-issue8): the bw operation (a window
# of messages, then one acknowledgement, as osu_bw) and the ping-pong's loop with its MPI calls
# bound once:
#  1. host ping-pong at 8 B: OSU osu_latency, the payload at this tree (default batch and
#     --batch 100) and at the previous tree (OLD_SRC, carried), alternating, 6 rounds;
#  2. every method's bw at 8 B, 64 MiB and 1 GiB (host memory: 8 B, 64 MiB; validated; window 8);
#  3. bench/compare with every pair (bench/compare-node.sh);
#  4. one health session against the shipped tolerances (the engine's loop changed).
# Usage (repository root, after `source bench/device-env.sh` and `source bench/device-tools.sh`,
# .whl, ext/tools.tar.xz and OLD_SRC carried): bench/h200x2-issue8b.sh OUTDIR [OLD_SRC]
out=${1:?outdir}; old=${2:-ext/old-src}; mkdir -p "$out"; out=$(cd "$out" && pwd)
py=$(command -v python3); log="$out/issue8b.log"; SECONDS=0
mpiopts=$($py -c "from gpucomm.probe import node_info; from gpucomm.siteconf import local_mpirun_options as o; print(' '.join(o(node_info())))")
{ date -u +%FT%TZ; nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader; } > "$log" 2>&1
osu=$GPUCOMM_OSU_DIR/libexec/osu-micro-benchmarks/mpi/pt2pt/osu_latency
med() { $py -c "import sys,json;[print(round(json.loads(l.split(' ',1)[1])['time_us']['median'],3)) for l in sys.stdin if l.startswith('GPUCOMM-RESULT')]"; }
host() { timeout 30 mpirun -np 2 $mpiopts "$@" 2>&1; }
PYTHONPATH=$(cd "$old" && pwd):$PYTHONPATH $py -c "import gpucomm, sys; print('previous tree:', gpucomm.__file__)" >> "$log"
echo "host 8 B, us: osu_latency | payload | payload --batch 100 | payload at $old" >> "$log"
for i in 1 2 3 4 5 6; do
  o=$(host $osu -m 8:8 -i 20000 -x 2000 | awk '$1==8{print $2}')
  n=$(host $py -m gpucomm pingpong --method host --sizes 8 --iters 20000 --warmup 2000 --quiet | med)
  b=$(host $py -m gpucomm pingpong --method host --sizes 8 --iters 20000 --warmup 2000 --batch 100 --quiet | med)
  p=$(PYTHONPATH=$(cd "$old" && pwd):$PYTHONPATH host $py -m gpucomm pingpong --method host --sizes 8 --iters 20000 --warmup 2000 --quiet | med)
  echo "$o $n $b $p" >> "$log"
done
echo "WALL host: $SECONDS s" >> "$log"
mkdir -p "$out/bw"
for m in ipc-copy ccl gpu-aware-mpi staging host; do
  case $m in staging|host) sizes=8,64M ;; *) sizes=8,64M,1G ;; esac
  timeout 60 mpirun -np 2 $mpiopts $py -m gpucomm bw --method $m --sizes $sizes --window 8 --iters 20 > "$out/bw/bw-$m.txt" 2>&1
  echo "bw $m rc=$?" >> "$log"
done
grep -h "^#.*timer=\|^ \+[0-9]" "$out"/bw/bw-*.txt >> "$log"
echo "WALL bw: $SECONDS s" >> "$log"
bench/compare-node.sh "$out" "$log"
echo "WALL compare: $SECONDS s" >> "$log"
if [ $SECONDS -lt 500 ]; then
  timeout 90 $py "$(command -v reframe)" -C config/settings.py -c checks/ --mode health -r \
      --report-file "$out/report-health-1.json" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' > "$out/reframe-health-1.log"
  grep -E "^\[ +(PASSED|FAILED)|Reason|expected" "$out/reframe-health-1.log" >> "$log"
else
  echo "health session not started: $SECONDS s used" >> "$log"
fi
echo "WALL total: $SECONDS s" >> "$log"
tar czf "$out/data.tgz" -C "$out" bw compare compare-host compare.log $(cd "$out" && ls reframe-health-*.log 2>/dev/null)
rm -rf "$out/bw" "$out/compare" "$out/compare-host" "$out/compare.log" "$out"/reframe-health-*.log
cat "$log"
