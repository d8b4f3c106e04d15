#!/usr/bin/env bash
# ipc-copy ping-pong, push (the peer copies into our buffer) against pull (we copy from the
# peer's buffer), alternating, three runs each, plus the copy-engine anchor (bench/ce_copy.py).
# Usage (repository root, after `source bench/device-env.sh`): bench/ipc-modes.sh
py=$(command -v python3)
python3 bench/ce_copy.py --size 1G; python3 bench/ce_copy.py --size 2G
for i in 1 2 3; do for mode in push pull; do
  GPUCOMM_IPC_MODE=$mode mpirun -np 2 -x GPUCOMM_IPC_MODE $py -m gpucomm pingpong --method ipc-copy \
     --sizes 8,256M,1G,2G --quiet 2>&1 | python3 -c "import sys,json; [print('$mode', r['size'], round(r['time_us']['median'],2), round(r['goodput_GBps'],1), round(r['goodput_GBps_best'],1)) for r in (json.loads(l.split(' ',1)[1]) for l in sys.stdin if l.startswith('GPUCOMM-RESULT'))]"
done; done
