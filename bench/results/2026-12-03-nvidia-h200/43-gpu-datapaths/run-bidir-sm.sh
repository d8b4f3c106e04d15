#!/usr/bin/env bash
# Issue 43, call 3: the SM bidirectional kernel as nvbandwidth's split-warp copy (every other warp
# each way, ld.cg/st.cg, one thread per 16 bytes), against nvbandwidth's SM bidirectional tests
# and the copy-engine and one-way SM paths, at 512 MiB, then the bidir-sm sweep validated.
# From the repository root, .whl, .deb (Boost) and ext carried as for run.sh:
#   bash bench/results/2026-12-03-nvidia-h200/43-gpu-datapaths/run-bidir-sm.sh OUT
set -uo pipefail
OUT=${1:?OUT}
mkdir -p "$OUT/w"
W=$OUT/w
t0=$SECONDS
phase() { echo; echo "=== $* (t=$((SECONDS - t0)) s)"; }
rc() { echo "rc=$?"; }
source bench/device-env.sh || exit 1
GD="python3 -m gpucomm gpu-datapaths --method staging"
phase "build nvbandwidth at the pinned commit (source carried in ext/src)"
BOOST_DEBS=.deb bash bench/build/nvbandwidth.sh /tmp/nvb ext/src/nvbandwidth-v0.8 > "$OUT/build.log" 2>&1; rc
T="host_to_device_memcpy_ce device_to_host_memcpy_ce host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce host_to_device_memcpy_sm device_to_host_memcpy_sm host_to_device_bidirectional_memcpy_sm device_to_host_bidirectional_memcpy_sm device_local_copy"
for round in 1 2; do
    phase "round $round: nvbandwidth, 512 MiB, 10 samples"
    /tmp/nvb/nvbandwidth -b 512 -i 10 -j -t $T > "$W/nvbandwidth-$round.json" 2>&1; rc
    phase "round $round: payload at 512 MiB, every path, near NUMA"
    $GD --sizes 512M --iters 20 --json "$W/side-$round.json" 2>&1 | grep -v '^GPUCOMM-'; rc
    python3 bench/lib/datapaths_side_by_side.py "$W/nvbandwidth-$round.json" "$W/side-$round.json" --size $((512 << 20)); rc
done
phase "bidir-sm sweep, validated"
$GD --sizes 4K:1G:4 --paths bidir-sm --json "$W/bidir-sweep.json" 2>&1 | grep -v '^GPUCOMM-'; rc
(cd "$OUT" && tar czf records.tgz w && rm -rf w)
phase done
