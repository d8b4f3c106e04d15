#!/usr/bin/env bash
# bench/compare with every pair on the 2-GPU node, as the device calls run it: the GPU pairs
# (3 alternating repeats, 8 B and 64 MiB to 1 GiB, 50 timed iterations; bw with osu_bw's -W 8) into OUTDIR/compare,
# the host pair (8 B and 64 MiB, 200 iterations) into OUTDIR/compare-host; their logs in
# OUTDIR/compare.log, return codes in LOG.
# Usage (repository root, after `source bench/device-env.sh` and `source bench/device-tools.sh`):
#   bench/compare-node.sh OUTDIR LOG
out=${1:?outdir}; log=${2:?log}; py=$(command -v python3)
timeout 450 $py bench/compare --out "$out/compare" --repeats 3 \
    --only ipc-copy-bw,ipc-copy,ccl-pingpong,ccl-allreduce,gpu-aware-mpi-bw,gpu-aware-mpi \
    --sizes 8,64M,256M,1G --iters 50 --warmup 5 --timeout 40 > "$out/compare.log" 2>&1
echo "compare rc=$?" >> "$log"
timeout 60 $py bench/compare --out "$out/compare-host" --repeats 3 --only host --sizes 8,64M --iters 200 --warmup 20 \
    --timeout 20 >> "$out/compare.log" 2>&1
echo "compare host rc=$?" >> "$log"
cp "$out/compare/compare.md" "$out/compare.md" 2>/dev/null
cp "$out/compare-host/compare.md" "$out/compare-host.md" 2>/dev/null
exit 0
