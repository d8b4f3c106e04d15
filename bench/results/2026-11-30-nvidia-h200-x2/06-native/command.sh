#!/usr/bin/env bash
# The native-tool checks (checks/native.py) on the 2-GPU node, with binaries built on the node
# from the public sources (OSU 7.4 with CUDA, nccl-tests 2.19.6 with MPI=1; the build is not part
# of this repository): GPUCOMM_OSU_DIR and GPUCOMM_NCCL_TESTS_DIR point at them.
# Usage (repository root, after `source bench/device-env.sh`): bench/h200x2-native.sh OUTDIR
out=${1:?outdir}; mkdir -p "$out"
start=$(date +%s)
python3 "$(command -v reframe)" -C config/settings.py -c checks/native.py -r -S iters=20 -S warmup=2 \
    --report-file "$out/report-native.json" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' > "$out/reframe-native.log"
echo "WALL native: $(( $(date +%s) - start )) s" >> "$out/walltimes.txt"
grep -E "OK|FAIL|SKIP|PASSED|FAILED|P: " "$out/reframe-native.log"
tar czf "$out/outputs-native.tgz" output/ 2>/dev/null
