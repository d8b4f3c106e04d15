#!/usr/bin/env bash
# host ping-pong at 8 B on this machine: OSU 7.4 osu_latency, the payload as in the working
# tree ("new") and at commit OLD ("old", a git worktree), alternating, 12 rounds
# usage (repository root, the payload installed or on PYTHONPATH): bench/host-ab.sh OSU_LATENCY OLD_SRC
# (OLD_SRC: `git worktree add /tmp/old COMMIT`, then /tmp/old/src)
OSU=$1; OLD=$2; py=$(command -v python)
med() { python3 -c "import sys,json;[print(round(json.loads(l.split(' ',1)[1])['time_us']['median'],3)) for l in sys.stdin if l.startswith('GPUCOMM-RESULT')]"; }
for i in $(seq 1 12); do
  o=$(mpirun -np 2 --bind-to core $OSU -m 8:8 -i 20000 -x 2000 2>&1 | awk '$1==8{print $2}')
  n=$(mpirun -np 2 --bind-to core $py -m gpucomm pingpong --method host --sizes 8 --iters 20000 --warmup 2000 --quiet 2>&1 | med)
  old=$(mpirun -np 2 --bind-to core -x PYTHONPATH=$OLD $py -m gpucomm pingpong --method host --sizes 8 --iters 20000 --warmup 2000 --quiet 2>&1 | med)
  echo "$o $n $old"
done
