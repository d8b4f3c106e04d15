#!/usr/bin/env bash
# Host ping-pong at 8 B: osu_latency against the payload with mpi4py's timed loop and with the
# compiled one (--loop numba-mpi), alternating, ROUNDS rounds, the same mpirun for all.
# Like for like on a busy machine: OSU's figure is the average of one timed block of iterations,
# so OSU runs BLOCKS launches of -i 2000 per round and the payload runs samples of 2000
# iterations (--batch 2000: each sample the average of 2000 round trips), BLOCKS samples; the
# medians of those block averages are compared.  The payload also runs with its default batch (20).
# Usage: command.sh OSU_LATENCY ROUNDS OUTDIR   (from the repository root, its venv in .venv)
set -u
osu=$1 rounds=${2:-8} out=${3:-.} blocks=10
mpirun=".venv/bin/mpirun -np 2 --bind-to core"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONPATH=src
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
    : > "$out/osu.$r.txt"
    for b in $(seq 1 $blocks); do
        $mpirun "$osu" -m 8:8 -i 2000 -x 200 >> "$out/osu.$r.txt" 2>&1
    done
    for loop in mpi4py numba-mpi; do
        $mpirun .venv/bin/python -m gpucomm pingpong --method host --sizes 8 --iters $((2000 * blocks)) \
            --warmup 2000 --batch 2000 --loop $loop --quiet > "$out/$loop-batch2000.$r.txt" 2>&1
        $mpirun .venv/bin/python -m gpucomm pingpong --method host --sizes 8 --iters 20000 \
            --warmup 2000 --loop $loop --quiet > "$out/$loop-batch20.$r.txt" 2>&1
    done
done
