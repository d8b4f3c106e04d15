#!/bin/bash
# The compiled loops' set-up per launch, numba's cache empty then filled (payload/mpiloops.py):
# the host method's first meta record (setup_s: backend, method with its loops, buffers) of
# three launches in a row, after deleting the cached loops.  Usage (repository root, the venv
# of the README's test command active): command.sh OUT
OUT=${1:?usage: command.sh OUT}; mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -f src/gpucomm/payload/__pycache__/mpiloops.*
for i in 1 2 3; do
  mpirun --oversubscribe -np 2 python -m gpucomm pingpong --method host --sizes 8 --iters 2000 --loop numba-mpi \
      --quiet --json "$OUT/run$i.json" > /dev/null || exit 1
  python3 -c "import json,sys; m=json.load(open(sys.argv[1]))['meta']; print('launch $i:', 'timed_loop', m.get('timed_loop'), 'setup_s', m['setup_s'], 'process_age_s', m['process_age_s'])" "$OUT/run$i.json"
done
