#!/usr/bin/env bash
# Issue 43, bidir-sm: the SM bidirectional kernel as nvbandwidth's split-warp copy (every other
# warp each way in every block, 16 B a thread, ld.cg/st.cg, a grid of one thread per 16 B each
# way) against nvbandwidth's host<->device bidirectional SM tests in the same call; the
# one-direction SM paths beside them; every payload transfer validated.  From the repository
# root, .whl, .deb (Boost) and ext (nvbandwidth's source) carried:
#   bash bench/results/2026-12-03-nvidia-h200/43-bidir-sm/run.sh OUT
set -uo pipefail
OUT=${1:?OUT}
mkdir -p "$OUT"
t0=$SECONDS
phase() { echo; echo "=== $* (t=$((SECONDS - t0)) s)"; }
rc() { echo "rc=$?"; }
source bench/device-env.sh || exit 1
nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.current,pcie.link.width.current --format=csv
phase "build nvbandwidth at the pinned commit"
BOOST_DEBS=.deb bash bench/build/nvbandwidth.sh /tmp/nvb ext/src/nvbandwidth-v0.8 > "$OUT/build.log" 2>&1; rc
tail -n 3 "$OUT/build.log"
T="host_to_device_memcpy_sm device_to_host_memcpy_sm host_to_device_bidirectional_memcpy_sm device_to_host_bidirectional_memcpy_sm"
GD="python3 -m gpucomm gpu-datapaths --method staging --paths h2d-sm,d2h-sm,bidir-sm"
for round in 1 2; do
    phase "round $round: nvbandwidth, 512 MiB, 10 samples (JSON)"
    /tmp/nvb/nvbandwidth -b 512 -i 10 -j -t $T > "$OUT/nvbandwidth-$round.json" 2>&1; rc
    phase "round $round: payload, 256 and 512 MiB, SM paths, validated"
    $GD --sizes 256M,512M --iters 20 --json "$OUT/payload-$round.json" 2>&1 | grep -v '^GPUCOMM-'; rc
    python3 bench/lib/datapaths_side_by_side.py "$OUT/nvbandwidth-$round.json" "$OUT/payload-$round.json" \
        --size $((512 << 20)); rc
done
phase done
