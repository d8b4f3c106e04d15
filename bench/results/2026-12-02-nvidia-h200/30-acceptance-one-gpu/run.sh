#!/usr/bin/env bash
# Issue 30 on one GPU (kind nvidia-h200), and issue 29's second look: NodeStateCheck's reader
# with the real NVML (read, judged against its node class, a link forced down, a hook that
# cannot fire); the soak (--validate-every) at 8 B and 1 MiB, clean and against a one-in-7
# corruption; the network path of one node (ccl with P2P and SHM off: NET/Socket over lo, two
# ranks with distinct NCCL host identities on the one GPU) and its proof from NCCL's log;
# gpu-aware-mpi with the probe's launch options and nvshmem on the shared GPU (limited MPG);
# ReFrame's health and acceptance modes.  From the repository root, .whl carried:
#   bash bench/results/2026-12-02-nvidia-h200/30-acceptance-one-gpu/run.sh OUT
set -uo pipefail
OUT=${1:?OUT}
mkdir -p "$OUT/w"
t0=$SECONDS
phase() { echo; echo "=== $* (t=$((SECONDS - t0)) s)"; }
source bench/device-env.sh || exit 1
W=$OUT/w
rc() { echo "rc=$?"; }
phase "NodeStateCheck's reader, real NVML"
python3 -c 'import pynvml; print("nvidia-ml-py", pynvml.__version__ if hasattr(pynvml, "__version__") else "?")'
python3 -m gpucomm.site.nodestate --json "$W/nodestate-read.json"; rc
python3 config/nodeclasses.py h200-sxm-1gpu >"$W/expected.json"; rc
python3 -m gpucomm.site.nodestate --expect "$W/expected.json" --json "$W/nodestate-judged.json"; rc
GPUCOMM_TEST_LINK_DOWN=0:7 python3 -m gpucomm.site.nodestate --expect "$W/expected.json"; rc
GPUCOMM_TEST_LINK_DOWN=0:40 python3 -m gpucomm.site.nodestate --expect "$W/expected.json"; rc
mp() {  # two ranks on the one GPU, each its own NCCL host identity
    timeout 150 mpirun -np 2 --bind-to none "$@"
}
ID='NCCL_HOSTID=gcn$OMPI_COMM_WORLD_RANK exec python3 -m gpucomm "$@"'
phase "soak: clean, every timed sample checked at 8 B and 1 MiB"
for m in staging ipc-copy ccl; do
    mp bash -c "$ID" _ pingpong --method $m --sizes 8,1M --validate-every 1 --allow-shared-gpu \
        --json "$W/soak-clean-$m.json" 2>&1 | grep -v '^GPUCOMM-' | tail -n 4; rc
done
phase "soak: a one-in-7 corruption of 1 MiB (ccl), without then with --validate-every 7"
for v in "" "--validate-every 7"; do
    GPUCOMM_TEST_CORRUPT=1:1048576 GPUCOMM_TEST_CORRUPT_EVERY=7 mp -x GPUCOMM_TEST_CORRUPT -x GPUCOMM_TEST_CORRUPT_EVERY \
        bash -c "$ID" _ pingpong --method ccl --sizes 8,1M --iters 20 --batch 1 --allow-shared-gpu $v \
        --json "$W/soak-corrupt${v:+-v7}.json" 2>&1 | grep -v '^GPUCOMM-' | tail -n 4; rc
done
phase "network path of one node: ccl with P2P and SHM off, NET/Socket over lo"
(cd "$W" && mp -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_NET=Socket -x NCCL_SOCKET_IFNAME==lo \
    -x NCCL_DEBUG=INFO -x NCCL_DEBUG_FILE=gpucomm_nccl_debug.%h.%p.log \
    bash -c "$ID" _ bw --method ccl --sizes 8,1M,64M --window 8 --allow-shared-gpu --json nicpath.json 2>&1 \
    | grep -v '^GPUCOMM-' | tail -n 6; rc
 grep -h "via NET\|Using network" gpucomm_nccl_debug.*.log | sort | uniq -c | head -n 8
 python3 -c "from gpucomm.rfm.nicpath import network_path_ok; print(network_path_ok('gpucomm_nccl_debug.*.log','NET/Socket').evaluate())"; rc)
phase "gpu-aware-mpi with the probe's launch options, nvshmem on the shared GPU"
OPTS=$(python3 -c 'import shlex; from gpucomm.site.probe import node_info; from gpucomm.site.siteconf import local_mpirun_options; print(shlex.join(local_mpirun_options(node_info())))')
echo "options: $OPTS"
eval "mp $OPTS python3 -m gpucomm pingpong --method gpu-aware-mpi --sizes 8,1M,64M --allow-shared-gpu --json $W/pp-gam.json" 2>&1 | grep -v '^GPUCOMM-' | tail -n 6; rc
mp python3 -m gpucomm pingpong --method nvshmem --sizes 8,1M,64M --allow-shared-gpu --json "$W/pp-nvshmem.json" 2>&1 | grep -v '^GPUCOMM-' | tail -n 6; rc
phase "ReFrame health mode"
reframe -C config/settings.py -c checks/ --mode health -r --report-file "$W/health.json" >"$OUT/health.log" 2>&1; rc
grep -aE 'PASSED|FAILED|FAIL |SKIP|OK ' "$OUT/health.log" | tail -n 14
phase "ReFrame acceptance mode (one node: -S sizes=8,1M,64M)"
reframe -C config/settings.py -c checks/ --mode acceptance -S sizes=8,1M,64M -r --report-file "$W/acceptance.json" >"$OUT/acceptance.log" 2>&1; rc
grep -aE 'PASSED|FAILED|FAIL |OK ' "$OUT/acceptance.log" | tail -n 20
python3 -m gpucomm report "$W/health.json" "$W/acceptance.json" -o "$W/report" 2>&1 | tail -n 3
(cd "$OUT" && tar czf records.tgz w && rm -rf w)
phase done
