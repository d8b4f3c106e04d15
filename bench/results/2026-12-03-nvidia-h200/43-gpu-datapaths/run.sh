#!/usr/bin/env bash
# Issue 43 on one GPU (kind nvidia-h200): the GPU data-path operation (payload gpu-datapaths:
# host <-> device by copy engine and by SM, both at once, device-local copy, near and far NUMA)
# over the full sweep, every transfer validated; nvbandwidth (bench/build/nvbandwidth.sh, the
# pinned commit, carried in ext/src) built and run, side by side at 512 MiB (payload/native >=
# 0.97); the slowed-GPU hook; bad input (too large, no such NUMA node, ulimit -l, pageable);
# with CHECKS=1 also ReFrame's health and acceptance modes of checks/datapaths.py and the hook
# failing the check.  From the repository root, .whl and .deb (Boost) and ext carried:
#   bash bench/results/2026-12-03-nvidia-h200/43-gpu-datapaths/run.sh OUT
set -uo pipefail
OUT=${1:?OUT}
mkdir -p "$OUT/w"
W=$OUT/w
t0=$SECONDS
phase() { echo; echo "=== $* (t=$((SECONDS - t0)) s)"; }
rc() { echo "rc=$?"; }
source bench/device-env.sh || exit 1
GD="python3 -m gpucomm gpu-datapaths --method staging"
phase "the machine"
nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,clocks.mem --format=csv
nvidia-smi topo -m 2>&1 | head -n 8
ls /sys/devices/system/node/ | tr '\n' ' '; echo; cat /sys/devices/system/node/has_cpu /sys/devices/system/node/node0/distance 2>&1
for f in /sys/bus/pci/devices/*/numa_node; do d=${f%/numa_node}; [ "$(cat $d/vendor 2>/dev/null)" = 0x10de ] && echo "$d numa_node $(cat $f)"; done
echo "ulimit -l: $(ulimit -l)"; grep CapEff /proc/self/status
ls /usr/include/boost/program_options.hpp 2>&1; cmake --version | head -1; nvcc --version | tail -1
phase "build nvbandwidth at the pinned commit (source carried in ext/src)"
BOOST_DEBS=.deb bash bench/build/nvbandwidth.sh /tmp/nvb ext/src/nvbandwidth-v0.8 2>&1 | tee "$OUT/build.log"; rc
phase "nvbandwidth, 512 MiB, 10 samples"
T="host_to_device_memcpy_ce device_to_host_memcpy_ce host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce host_to_device_memcpy_sm device_to_host_memcpy_sm host_to_device_bidirectional_memcpy_sm device_to_host_bidirectional_memcpy_sm device_local_copy"
/tmp/nvb/nvbandwidth -b 512 -i 10 -t $T > "$W/nvbandwidth.txt" 2>&1; rc
grep -vE '^\s*$' "$W/nvbandwidth.txt" | head -n 80
/tmp/nvb/nvbandwidth -b 512 -i 10 -j -t $T > "$W/nvbandwidth.json" 2>&1; rc
phase "payload at 512 MiB, every path, near NUMA (the side by side)"
$GD --sizes 512M --iters 20 --json "$W/side.json" 2>&1 | grep -v '^GPUCOMM-'; rc
python3 bench/lib/datapaths_side_by_side.py "$W/nvbandwidth.json" "$W/side.json" --size $((512 << 20)); rc
phase "payload full sweep, near and far NUMA, every path"
$GD --sizes 4K:1G:4,512M --host-numa both --json "$W/sweep.json" 2>&1 | grep -v '^GPUCOMM-'; rc
python3 - "$W/sweep.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("meta gpus:", json.dumps(d["meta"].get("gpus")), "host_memory:", d["meta"].get("host_memory"))
print("nominal:", d["meta"].get("nominal_GBps"), d["meta"].get("nominal_source"), "timer:", d["meta"].get("timer"))
recs = d["results"]
print(f"{len(recs)} records, all validated: {all(r['validated'] for r in recs)}")
for r in recs:
    if r["size"] in (4096, 1 << 20, 64 << 20, 256 << 20, 1 << 30):
        t = r["time_us"]
        extra = f" hbm {r['hbm_GBps']:.0f}" if "hbm_GBps" in r else f" busbw {r['busbw_GBps']:.2f}"
        print(f"{r['path']:9} {r['numa']:6} {r['size']:>11} goodput {r['goodput_GBps']:8.2f}{extra}"
              f"  median {t['median']:.1f} us p05 {t['p05']:.1f} p95 {t['p95']:.1f} n={r['samples']}")
PY
phase "the slowed-GPU hook: GPU 0 at half speed (64 MiB, h2d-ce)"
GPUCOMM_TEST_SLOW_GPU=0:0.5 $GD --sizes 64M --paths h2d-ce,d2h-ce --json "$W/hook.json" 2>&1 | grep -v '^GPUCOMM-'; rc
GPUCOMM_TEST_SLOW_GPU=3:0.5 $GD --sizes 64M --paths h2d-ce 2>&1 | grep -v '^GPUCOMM-'; rc
phase "bad input: too large, no such NUMA node, ulimit -l, pageable"
$GD --sizes 100G 2>&1 | grep -v '^GPUCOMM-'; rc
$GD --sizes 64M --numa-node 7 2>&1 | grep -v '^GPUCOMM-'; rc
if command -v setpriv >/dev/null; then
    (ulimit -l 64; setpriv --bounding-set=-ipc_lock --inh-caps=-ipc_lock -- \
        bash -c "grep CapEff /proc/self/status; $GD --sizes 64M" 2>&1 | grep -v '^GPUCOMM-'; rc)
    (ulimit -l 64; setpriv --bounding-set=-ipc_lock --inh-caps=-ipc_lock -- \
        $GD --sizes 64M --pageable --json "$W/pageable.json" 2>&1 | grep -v '^GPUCOMM-'; rc)
else
    echo "no setpriv: ulimit -l as root (CAP_IPC_LOCK) not tested"
fi
if [ "${CHECKS:-0}" = 1 ]; then
    phase "ReFrame: DataPathsCheck, health mode"
    reframe -C config/settings.py -c checks/datapaths.py --mode health -r --report-file "$W/health.json" >"$OUT/health.log" 2>&1; rc
    grep -aE 'PASSED|FAILED|FAIL |SKIP|OK |P: ' "$OUT/health.log" | tail -n 40
    phase "ReFrame: DataPathsCheck, acceptance mode (full sweep)"
    reframe -C config/settings.py -c checks/datapaths.py --mode acceptance -r --report-file "$W/acceptance.json" >"$OUT/acceptance.log" 2>&1; rc
    grep -aE 'PASSED|FAILED|FAIL |SKIP|OK |P: ' "$OUT/acceptance.log" | tail -n 40
    phase "ReFrame: the hook, GPU 0 at half speed, health mode: FAIL naming the GPU"
    GPUCOMM_TEST_SLOW_GPU=0:0.5 reframe -C config/settings.py -c checks/datapaths.py --mode health -r >"$OUT/hook.log" 2>&1; rc
    grep -aE 'FAIL|gpu0_|TEST HOOK' "$OUT/hook.log" | head -n 30
fi
(cd "$OUT" && tar czf records.tgz w && rm -rf w)
phase done
