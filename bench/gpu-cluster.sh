#!/usr/bin/env bash
# A Slurm cluster of GPU "nodes" on one GPU machine, and the inter-node checks through it
# (partition gpucluster:gpu, config/systems/gpucluster.py; docs/gpu-cluster.md).  Root only.
# From the repository root, with .deb/ (and for `run`, .whl/) carried:
#
#   bench/gpu-cluster.sh run [--nodes 4] [--net auto|netns|host] [--mps auto|on|off]
#       facts, bench/device-env.sh, unpack, up, the ReFrame runs, tolerances, down: every log and
#       report into $OUT (default /tmp/gpucomm-gpucluster-out), a marker and the time per phase
#   bench/gpu-cluster.sh up [--nodes 4] [--net ...] [--mps ...]   # unpack (if not yet) and up
#   bench/gpu-cluster.sh checks      # the ReFrame runs on a cluster that is up (reframe on PATH)
#   bench/gpu-cluster.sh down        # stops and deletes all of it; says what is left, if anything
#   eval "$(bench/gpu-cluster.sh env)"  # SLURM_CONF and PATH (and MPS) of the cluster
#   bench/gpu-cluster.sh ctl degrade ggn3 8gbit   # .ci/cluster-ctl.sh's faults on this cluster
#                                                 # (restore ggn3, kill-slurmd, start-slurmd)
#   bench/gpu-cluster.sh facts | unpack
#
# The cluster is .ci/cluster-up.sh's (the same code) under its own names, so that it can run
# beside CI's: state /tmp/gpucomm-gpucluster (GPUCOMM_GPUCLUSTER_DIR), nodes ggn<i>, bridges
# ggbr<l>, veths ggv<i>/ggup<l>/ggdn<l>, subnet 10.78.0.0/24, ports 6927/6928, its own lock and
# its own munged (as root, every file in the state dir); Slurm, munge, PMIx and iproute2 from
# the Debian packages of .deb/ (GPUCOMM_DEBS) unpacked into /tmp/gpucomm-root
# (GPUCOMM_SLURM_ROOT; bench/lib/debs.sh: never over /, the node's own libraries first).
#
# Network (--net auto): a network namespace per node on unshaped bridges where the kernel has
# veth and bridges (NCCL, UCX and Open MPI on eth0), else every node a UTS + mount namespace in
# the host's network (slurmd on a port of its own, addresses 127.78.0.x, transports on lo);
# one line says which and why.  GPUs: every node one GPU as Slurm GRES, node i GPU (i-1) mod G of
# /dev/nvidia[0-9]* (GPUCOMM_GPUCLUSTER_GPU_FILES: comma-separated files instead); with fewer
# GPUs than nodes they share, under MPS (--mps auto: where nvidia-cuda-mps-control is and a CUDA
# client works under it).  4 nodes: 2 leaf switches of 2 (placements, noise layouts), else 1.
#
# The ReFrame runs of `checks` (sizes small: these are sockets on one machine; the numbers are
# recorded and give the partition's references, never compared with the paper):
#   mpp       MultiPingPongCheck, ccl, gpu-aware-mpi, staging, 2 nodes (one pair, same switch)
#   scaling   AllToAllScalingCheck, AllReduceScalingCheck at 2 and 4 nodes (one rank per node)
#   pairs     PairMatrixCheck, ccl, one rank on each node (the node-pair matrix)
#   noise     NoiseCheck, ccl victim ping-pong, ccl aggressor, layout shared-link (4 nodes or more)
#   plugin    the ccl checks on gpucluster:gpu-plugin: each must FAIL at NCCL's init
#   tolerances  gpucomm tolerances of mpp, scaling and pairs (--yaml, --md)
# Knobs: RFM_REPEAT [1] (runs of mpp and scaling; more give the tolerances a spread: reports of
# several calls pool with gpucomm tolerances --pool), SIZES [8,64K,1M,16M], BUDGET [1] (timed s
# per size), ALLREDUCE_SIZE [16M], ALLTOALL_SIZE [2M], TIME_LIMIT [150] (s per job: a hang costs
# that, not the device call), RFM_TIMEOUT [400] (s per ReFrame run), RFM_ARGS (more);
# DRY_RUN=1: `checks` writes every job script (ReFrame --dry-run) and submits none: no cluster
# needed, only its slurm.conf and cluster.env in GPUCOMM_GPUCLUSTER_DIR (tests/rfm/test_gpucluster.py).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

STATE=${GPUCOMM_GPUCLUSTER_DIR:-/tmp/gpucomm-gpucluster}
OUT=${OUT:-/tmp/gpucomm-gpucluster-out}
DEBS=${GPUCOMM_DEBS:-.deb}
export GPUCOMM_SLURM_ROOT=${GPUCOMM_SLURM_ROOT-/tmp/gpucomm-root}   # '': Slurm installed in /
export GPUCOMM_CLUSTER_DIR=$STATE GPUCOMM_CLUSTER_NAMES=gg GPUCOMM_CLUSTER_PORT=6927
export GPUCOMM_CLUSTER_LOCK=$STATE.lock GPUCOMM_CLUSTER_MUNGE=$STATE/munge
export GPUCOMM_CLUSTER_MARK="# written by gpucomm bench/gpu-cluster.sh"   # config/systems/gpucluster.py
export GPUCOMM_CLUSTER_NAME=gpucomm-gpucluster
NETS=(10.78.0 127.78.0)   # netns, host: the subnet's first three octets
# the network mode of a cluster that is up (its cluster.env), for the names and addresses
if [ -s "$STATE/cluster.env" ]; then
    export GPUCOMM_CLUSTER_NETMODE=$(sed -n 's/^NETMODE=//p' "$STATE/cluster.env")
fi
[ "${GPUCOMM_CLUSTER_NETMODE:-netns}" = host ] && export GPUCOMM_CLUSTER_NET=${NETS[1]} || export GPUCOMM_CLUSTER_NET=${NETS[0]}
# shellcheck source=../.ci/cluster-lib.sh
. "$REPO/.ci/cluster-lib.sh"

MPS_CTL=$(command -v nvidia-cuda-mps-control || echo /usr/local/nvidia/bin/nvidia-cuda-mps-control)
T0=$SECONDS

exec 3>&1   # the terminal's stdout, also inside a phase (whose output goes to its log)
IN_PHASE=
say() { echo "gpu-cluster: $*"; }
fail() {
    echo "gpu-cluster: FAILED: $*" >&2
    [ -z "$IN_PHASE" ] || echo "gpu-cluster: FAILED in phase $IN_PHASE: $* (log: $OUT/$IN_PHASE.log)" >&3
    exit 1
}

# (set -e does not hold inside a phase, which runs left of ||: each step that must stop it says so)
phase() {  # phase NAME FUNCTION [ARGS]: run it (in this shell) into $OUT/NAME.log, marked and timed
    local name=$1 t=$SECONDS rc=0
    shift
    mkdir -p "$OUT"
    echo "=== phase $name (at +$((SECONDS - T0)) s)"
    IN_PHASE=$name
    "$@" >"$OUT/$name.log" 2>&1 || rc=$?
    IN_PHASE=
    grep -E "^(gpu-cluster|debs|cluster-up|cluster-down|cluster|summary|  )" "$OUT/$name.log" | tail -n 40 || true
    echo "=== phase $name: rc=$rc, $((SECONDS - t)) s"
    return "$rc"
}

# ---------------------------------------------------------------------------------- facts

facts() {
    say "machine: $(uname -srm), $(nproc) CPUs"
    say "os: $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME (ID=$ID VERSION_ID=${VERSION_ID:-?})")"
    say "glibc: $(ldd --version 2>&1 | head -n 1)"
    cat /etc/os-release 2>/dev/null || true
    say "cgroup file system: $(stat -fc %T /sys/fs/cgroup 2>&1) (cgroup2fs: v2; tmpfs: v1)"
    say "python3: $(python3 --version 2>&1)"
    for tool in unshare nsenter hostname dpkg ip tc ldconfig nvidia-smi; do
        say "tool $tool: $(command -v "$tool" || echo missing)"
    done
    say "MPS: $([ -x "$MPS_CTL" ] && echo "$MPS_CTL" || echo "no nvidia-cuda-mps-control")"
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi -L || true
        nvidia-smi --query-gpu=index,name,compute_mode,memory.total --format=csv || true
    fi
    say "GPU device files: $(gpu_files || true)"
}

gpu_files() {  # the GPUs the nodes get, comma-separated ('' : none)
    if [ -n "${GPUCOMM_GPUCLUSTER_GPU_FILES+set}" ]; then echo "$GPUCOMM_GPUCLUSTER_GPU_FILES"; return; fi
    local f files=()
    for f in /dev/nvidia[0-9]*; do [ -e "$f" ] && files+=("$f"); done
    (IFS=,; echo "${files[*]}")
}

# ---------------------------------------------------------------------------------- cluster

unpack() {
    [ -n "$SLURM_ROOT" ] || { say "Slurm from / (GPUCOMM_SLURM_ROOT empty): nothing to unpack"; return 0; }
    bash bench/lib/debs.sh unpack "$DEBS" "$SLURM_ROOT" || fail "unpack of $DEBS into $SLURM_ROOT"
    bash bench/lib/debs.sh check "$SLURM_ROOT" || fail "the unpacked packages lack libraries (above)"
}

net_probe() {  # the network mode this kernel allows: prints netns or host; one line says why
    local p=${NAMES}probe err
    if ! err=$(unshare --uts --mount --propagation private -- true 2>&1); then
        fail "no UTS/mount namespaces here (unshare: $err): no cluster of namespace nodes"
    fi
    if err=$( { ip link add "${p}0" type veth peer name "${p}1" && ip link del "${p}0" &&
                ip link add "${p}b" type bridge && ip link del "${p}b" &&
                ip netns add "$p" && ip netns del "$p"; } 2>&1 ); then
        say "network: veth, bridges and network namespaces work (kernel $(uname -r)): a netns per node" >&2
        echo netns
    else
        ip link del "${p}0" 2>/dev/null; ip link del "${p}b" 2>/dev/null; ip netns del "$p" 2>/dev/null
        say "network: veth/bridge/netns do not work (kernel $(uname -r): $(echo "$err" | head -n 1)): every node in the host's network (UTS namespaces, loopback)" >&2
        echo host
    fi
    return 0
}

mps_start() {  # mps_start auto|on|off: MPS for the nodes' shared GPU; sets MPS=0/1
    MPS=0
    [ "$1" = off ] && { say "MPS: off (--mps off): the nodes time-slice the GPU"; return 0; }
    if [ ! -x "$MPS_CTL" ]; then
        [ "$1" = on ] && fail "--mps on, but no nvidia-cuda-mps-control"
        say "MPS: no nvidia-cuda-mps-control: the nodes time-slice the GPU"; return 0
    fi
    export CUDA_MPS_PIPE_DIRECTORY=$STATE/mps/pipe CUDA_MPS_LOG_DIRECTORY=$STATE/mps/log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    "$MPS_CTL" -d || { say "MPS: nvidia-cuda-mps-control -d failed: the nodes time-slice the GPU"; return 0; }
    # a CUDA client under it: the server starts on the first one
    if timeout 60 python3 -c "import cupy; cupy.cuda.runtime.getDeviceCount(); print(int(cupy.arange(4).sum()))" >"$STATE/mps/probe.log" 2>&1; then
        MPS=1
        say "MPS: on (control daemon $MPS_CTL, pipes in $CUDA_MPS_PIPE_DIRECTORY; a CUDA client ran under it)"
    else
        mps_stop
        unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
        [ "$1" = on ] && fail "--mps on, but a CUDA client fails under MPS: $(tail -n 1 "$STATE/mps/probe.log")"
        say "MPS: a CUDA client fails under it ($(tail -n 1 "$STATE/mps/probe.log")): off, the nodes time-slice the GPU"
    fi
}

mps_stop() {  # the control daemon of our pipe folder, if one was started (it ends its server)
    local pipe=${CUDA_MPS_PIPE_DIRECTORY:-$STATE/mps/pipe}
    [ -e "$pipe/control" ] && [ -x "$MPS_CTL" ] || return 0
    CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=${CUDA_MPS_LOG_DIRECTORY:-$STATE/mps/log} \
        timeout 30 "$MPS_CTL" <<<quit || true
    for _ in $(seq 100); do [ -e "$pipe/control" ] || break; sleep 0.1; done
    say "MPS: quit sent; MPS processes now: $(pgrep -a -f nvidia-cuda-mps | tr '\n' ';' || true)"
}

load_env() {  # the MPS variables of the cluster that is up (its cluster.env)
    if [ -s "$STATE/cluster.env" ] && grep -qx "MPS=1" "$STATE/cluster.env"; then
        export CUDA_MPS_PIPE_DIRECTORY=$STATE/mps/pipe CUDA_MPS_LOG_DIRECTORY=$STATE/mps/log
    fi
}

up() {
    local nodes=4 net=auto mps=auto leaves files gpus
    while [ $# -gt 0 ]; do
        case $1 in
            --nodes) nodes=$2; shift 2 ;;
            --net) net=$2; shift 2 ;;
            --mps) mps=$2; shift 2 ;;
            *) fail "up: unknown argument $1 (bench/gpu-cluster.sh --help)" ;;
        esac
    done
    [ "$(id -u)" = 0 ] || fail "must run as root (namespaces, bridges, daemons)"
    if [ -n "$SLURM_ROOT" ] && [ ! -x "$SLURM_ROOT/wrap/slurmd" ]; then unpack || return 1; fi
    [ -z "$(ls "$STATE"/pids/*.pid 2>/dev/null)" ] || down
    [ "$net" = auto ] && net=$(net_probe)
    case $net in netns) GPUCOMM_CLUSTER_NET=${NETS[0]} ;; host) GPUCOMM_CLUSTER_NET=${NETS[1]} ;;
                 *) fail "--net $net: choose auto, netns or host" ;; esac
    export GPUCOMM_CLUSTER_NETMODE=$net GPUCOMM_CLUSTER_NET   # for .ci/cluster-up.sh
    leaves=1; [ "$nodes" -ge 4 ] && leaves=2
    files=$(gpu_files)
    gpus=$(awk -F, '{print NF}' <<<"$files")
    say "up: $nodes nodes, $leaves leaf switch(es), network $net, GPUs: ${files:-none}"
    local cpus=$(( $(nproc) / nodes )); [ "$cpus" -ge 2 ] || cpus=2
    bash .ci/cluster-up.sh --nodes "$nodes" --leaves "$leaves" --cpus "$cpus" --inter-switch-rate none \
        --partition gpu ${files:+--gpu-files "$files"} || fail "cluster-up (its logs: $STATE/log)"
    MPS=0
    if [ -n "$files" ] && [ "$gpus" -lt "$nodes" ]; then mps_start "$mps"; fi
    # the facts config/systems/gpucluster.py reads beside SLURM_CONF
    cat >>"$STATE/cluster.env" <<ENV
NAMES=$NAMES
NETMODE=$net
IFACE=$([ "$net" = netns ] && echo eth0 || echo lo)
GPUS=${gpus:-0}
MPS=$MPS
ENV
    say "up: SLURM_CONF=$CONF"
    cat "$STATE/cluster.env"
    # every node answers, each with its own hostname (and its GPU)
    say "up: srun -N $nodes hostname (and SLURM_TOPOLOGY_ADDR):"
    srun -N "$nodes" --ntasks-per-node=1 -t 1 sh -c 'echo "$(hostname) ${SLURM_TOPOLOGY_ADDR:-}"' |
        sort | sed 's/^/  /'
    [ "${PIPESTATUS[0]}" = 0 ] || fail "srun -N $nodes hostname"
    if [ -n "$files" ]; then
        say "up: srun -N $nodes --gpus-per-node=1: each node's GPU"
        srun -N "$nodes" --ntasks-per-node=1 --gpus-per-node=1 -t 1 \
            sh -c 'echo "$(hostname) CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"' | sort | sed 's/^/  /'
    fi
}

down() {
    local left
    load_env
    bash .ci/cluster-down.sh
    mps_stop
    # nothing of ours may be left: daemons (pid files), namespaces, links
    left=$(ls "$STATE"/pids/*.pid 2>/dev/null || true)
    if command -v ip >/dev/null; then
        left+=$(ip netns list 2>/dev/null | grep -E "^${NAMES}n[0-9]+" || true)
        left+=$(ip -o link show 2>/dev/null | grep -oE " ${NAMES}(br|up|dn|v)[0-9]+[@:]" || true)
    fi
    if [ -s "$STATE/created" ]; then left+=$(cat "$STATE/created"); fi
    if [ -n "$left" ]; then
        echo "gpu-cluster: left behind after tear-down: $left" >&2
        return 1
    fi
    say "down: clean (no daemon, node namespace, veth or bridge of $STATE left)"
}

print_env() {
    load_env
    echo "export SLURM_CONF=$CONF PATH=$PATH"
    [ -z "${CUDA_MPS_PIPE_DIRECTORY:-}" ] ||
        echo "export CUDA_MPS_PIPE_DIRECTORY=$CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY=$CUDA_MPS_LOG_DIRECTORY"
}

# ---------------------------------------------------------------------------------- ReFrame

verdicts() {  # verdicts REPORT: one line per test case (result, and the reason of a failure)
    python3 - "$1" <<'EOF'
import json, sys
try:
    cases = json.load(open(sys.argv[1]))["runs"][0]["testcases"]
except (OSError, ValueError, KeyError, IndexError) as exc:
    sys.exit(f"summary: no report {sys.argv[1]}: {exc}")
for c in cases:
    reason = " ".join((c.get("fail_reason") or "").split())[:300]
    print(f"summary: {c['result'].upper():5} {c['display_name']}" + (f": {reason}" if reason else ""))
EOF
}

rfm() {  # rfm NAME ARGS...: one ReFrame run on the cluster, its stage/output under $OUT/rfm-NAME
    local name=$1 rc=0 action=-r
    shift
    [ "${DRY_RUN:-0}" = 1 ] && action=--dry-run
    mkdir -p "$OUT/reports"
    # shellcheck disable=SC2086
    timeout -s INT -k 30 "${RFM_TIMEOUT:-400}" python3 "$(command -v reframe)" -C config/settings.py \
        --prefix "$OUT/rfm-$name" --report-file "$OUT/reports/$name.json" "$@" ${RFM_ARGS:-} "$action" \
        >"$OUT/reframe-$name.log" 2>&1 || rc=$?
    echo "summary: reframe $name rc=$rc ($OUT/reframe-$name.log)"
    verdicts "$OUT/reports/$name.json" || true
    return 0
}

checks() {
    local nodes gpu=(--system gpucluster:gpu) repeat=(--repeat "${RFM_REPEAT:-1}")
    local sizes=(-S "sizes=${SIZES:-8,64K,1M,16M}" -S "budget=${BUDGET:-1}") limit=(-S "time_limit=${TIME_LIMIT:-150}s")
    command -v reframe >/dev/null || fail "no reframe on PATH (source bench/device-env.sh)"
    [ -s "$STATE/cluster.env" ] || fail "no cluster up ($STATE/cluster.env): bench/gpu-cluster.sh up"
    load_env
    nodes=$(sed -n 's/^NODES=//p' "$STATE/cluster.env")
    rfm mpp "${gpu[@]}" -c checks/internode.py -n MultiPingPongCheck -x '%pairs=all' \
        -t '^(ccl|gpu-aware-mpi|staging)$' -S ranks_per_node=1 "${sizes[@]}" "${limit[@]}" "${repeat[@]}"
    rfm scaling "${gpu[@]}" -c checks/internode.py -n 'AllToAllScalingCheck|AllReduceScalingCheck' \
        -S max_nodes="$nodes" -S ranks_per_node=1 -S "AllToAllScalingCheck.size=${ALLTOALL_SIZE:-2M}" \
        -S "AllReduceScalingCheck.size=${ALLREDUCE_SIZE:-16M}" -S "budget=${BUDGET:-1}" \
        -S "base_time_s=${TIME_LIMIT:-150}" -S time_per_node_s=0 "${repeat[@]}"
    rfm pairs "${gpu[@]}" -c checks/pairmatrix.py -n 'PairMatrixCheck%method=ccl' -S num_nodes="$nodes" \
        -S ranks_per_node=1 -S sizes=8,1M -S perf_sizes=1M -S budget=0.5 "${limit[@]}"
    if [ "$nodes" -ge 4 ]; then
        rfm noise "${gpu[@]}" -c checks/noise.py -n 'NoiseCheck%method=ccl%victim=pingpong%layout=shared-link' \
            -S load_fabric=y -S budget=0.5 "${limit[@]}"
    else
        echo "summary: noise skipped: $nodes nodes (victim and aggressor need 2 each)"
    fi
    plugin
}

plugin() {  # the ccl checks where NCCL must use its network plugin: every one must FAIL at init
    rfm plugin --system gpucluster:gpu-plugin -c checks/internode.py \
        -n 'MultiPingPongCheck%method=ccl%pairs=single' -n 'AllReduceScalingCheck%method=ccl%nodes=2' \
        -S ranks_per_node=1 -S sizes=8 -S AllReduceScalingCheck.size=8 -S time_limit=120s -S base_time_s=120
    [ "${DRY_RUN:-0}" = 1 ] && return 0
    python3 - "$OUT/reports/plugin.json" <<'EOF'
import json, sys
cases = json.load(open(sys.argv[1]))["runs"][0]["testcases"]
# a failure naming NCCL (the communicator's init, the plugin proof), not a timeout or a pass
bad = [c["display_name"] for c in cases if c["result"] != "fail" or "NCCL" not in (c.get("fail_reason") or "")]
print(f"summary: plugin variant: {len(cases) - len(bad)} of {len(cases)} ccl checks FAILED naming NCCL as they must"
      + (f"; NOT as they must: {', '.join(bad)}" if bad else ""))
for path in sorted(__import__("glob").glob(sys.argv[1].replace("reports/plugin.json", "rfm-plugin/stage/**/gpucomm_nccl_debug.*.log"), recursive=True))[:2]:
    lines = [ln.strip() for ln in open(path, errors="replace") if "NET/Plugin" in ln or "Failed to initialize any NET plugin" in ln]
    print(f"summary: NCCL's own words ({path.split('/stage/')[-1]}): {' | '.join(lines[:3]) or 'none'}")
EOF
}

tolerances() {
    local reports=()
    for r in mpp scaling pairs; do [ -s "$OUT/reports/$r.json" ] && reports+=("$OUT/reports/$r.json"); done
    [ ${#reports[@]} -gt 0 ] || fail "no reports in $OUT/reports"
    if python3 -m gpucomm tolerances "${reports[@]}" --yaml "$OUT/tolerances.yaml" --md "$OUT/tolerances.md" \
            >"$OUT/tolerances.out" 2>&1; then
        say "tolerances: $OUT/tolerances.yaml (the partition's references), $OUT/tolerances.md"
    else  # e.g. no pandas here (gpucomm[report]): the reports came back, run it where it is
        say "tolerances: failed ($(tail -n 1 "$OUT/tolerances.out")): python -m gpucomm tolerances $OUT/reports/{mpp,scaling,pairs}.json --yaml ... elsewhere"
    fi
}

# ---------------------------------------------------------------------------------- run

run() {
    local rc=0
    mkdir -p "$OUT"
    phase facts facts
    if ! command -v reframe >/dev/null; then
        say "installing the carried wheels (bench/device-env.sh)"
        # shellcheck source=device-env.sh
        source bench/device-env.sh >"$OUT/device-env.log" 2>&1 || fail "bench/device-env.sh: $(tail -n 3 "$OUT/device-env.log")"
        set -euo pipefail   # device-env.sh ends with set +e
    fi
    # on the terminal's stdout (fd 3) even when it fires inside a phase
    trap 'phase down down >&3 2>&1 || true' EXIT
    trap 'echo "gpu-cluster: interrupted" >&3; exit 143' TERM INT   # the EXIT trap still takes it down
    phase unpack unpack || fail "unpack (see $OUT/unpack.log)"
    phase up up "$@" || fail "up (see $OUT/up.log)"
    phase checks checks || rc=$?
    phase tolerances tolerances || true
    trap - EXIT TERM INT
    phase down down || rc=1
    grep -h "^summary:" "$OUT"/checks.log >"$OUT/SUMMARY" || true
    echo "=== gpu-cluster run: rc=$rc, $((SECONDS - T0)) s; logs and reports in $OUT (SUMMARY)"
    return "$rc"
}

case ${1:-} in
    run) shift; run "$@" ;;
    up) shift; phase up up "$@" ;;
    down) phase down down ;;
    checks) phase checks checks ;;
    plugin) phase plugin plugin ;;
    tolerances) phase tolerances tolerances ;;
    facts) facts ;;
    unpack) unpack ;;
    env) print_env ;;
    ctl) shift; bash .ci/cluster-ctl.sh "$@" ;;   # its names, state and tools: exported above
    *) sed -n '2,45p' "$0"; exit 2 ;;
esac
