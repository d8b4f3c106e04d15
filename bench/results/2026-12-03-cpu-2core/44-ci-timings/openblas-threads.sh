#!/usr/bin/env bash
# CPU seconds (user + sys, mpirun and both ranks) of a 2-rank host ping-pong launch (8 B, 10
# iterations, the mpi4py loop), OpenBLAS's pool at one thread per core (OPENBLAS_NUM_THREADS=
# nproc, numpy's default) against the payload's default since main.py's NODE_ENV (unset: 1).
# usage: bash openblas-threads.sh [ROUNDS]   (from the repository root, its .venv built)
set -euo pipefail
export PATH="$PWD/.venv/bin:$PATH"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cores=$(nproc); rounds=${1:-8}
root=(); [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
for r in $(seq "$rounds"); do
    for mode in pool one; do
        env=(env -u OPENBLAS_NUM_THREADS); [ $mode = pool ] && env=(env OPENBLAS_NUM_THREADS="$cores")
        "${env[@]}" /usr/bin/time -a -o "$work/$mode" -f "%U %S" mpirun "${root[@]}" --oversubscribe -np 2 \
            python -m gpucomm pingpong --method host --sizes 8 --iters 10 --loop mpi4py --quiet \
            --json "$work/r.json" >/dev/null
    done
done
python3 - "$work" "$cores" <<'PY'
import statistics, sys
for mode, what in (("pool", f"OPENBLAS_NUM_THREADS={sys.argv[2]} (a thread per core)"), ("one", "unset (the payload sets 1)")):
    cpu = [float(u) + float(s) for u, s in (ln.split() for ln in open(f"{sys.argv[1]}/{mode}"))]
    print(f"{what:45s} n={len(cpu)} median {statistics.median(cpu):.3f} CPU-s "
          f"(min {min(cpu):.3f}, max {max(cpu):.3f})")
PY
