"""Alps, Leonardo and LUMI: the job scripts their configs produce, line by line.

``reframe --dry-run`` runs every check through setup (partition, environment, resources,
launcher, references) and writes its rfm_job.sh without submitting anything; the scripts are
compared here with what a user of each site would write, on 1, 2 and 512 nodes.  The three
systems are dry-run once, concurrently, for the whole module.  The inter-node checks
(checks/internode.py) have their own module, test_internode.py.
"""

import csv
import importlib.util
import os
import subprocess
from dataclasses import dataclass, field

import pytest
import yaml

from gpucomm.analysis.references import FIGURES, METHOD_OF
from gpucomm.constants import METHODS
from gpucomm.metrics import busbw_GBps, goodput_GBps
from gpucomm.site.siteconf import slurm_access
from reframe_helpers import (
    DATAPATH_CHECKS,
    HEALTH_CHECKS,
    INTERNODE_CHECKS,
    NATIVE_CHECKS,
    NICPATH_CHECKS,
    NODE_JOB_CHECKS,
    NODESTATE_CHECKS,
    NOISE_CHECKS,
    PAIR_MATRIX_CHECKS,
    REPO,
    SHARED_CSV,
    check_classes,
    clean_env,
    dry_runs as dry_run_all,
    job_script,
    reframe,
    shared_dry_run,
    shared_dry_run_output,
    watchdog_s,
)

BIND = str(REPO / "config" / "bin" / "gpucomm-bind")
ACCOUNT = "gpucomm_test"
#: the payload's venv, as a user gives it (GPUCOMM_PYTHON): without it a site check fails at setup
VENV_PYTHON = "/scratch/gpucomm-venv/bin/python"
NODES = (1, 2, 512)
PAIR_OPS = ("pingpong", "bw")

#: NCCL/RCCL's network proof: its log in the stage directory (every site's ccl_net_check env)
CCL_DEBUG = {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET",
             "NCCL_DEBUG_FILE": "gpucomm_nccl_debug.%h.%p.log"}


@dataclass
class Site:
    partition: str            # ReFrame partition (full name)
    slurm_partition: str
    gpus: int                 # GPUs (or GCDs) per node
    gpu_request: str          # the sbatch GPU option, {} = GPUs per node
    srun: list                # launcher options before the binding wrapper
    visible: str              # the variable that gives each task its GPU
    env: dict                 # the environment's exports, in order
    method_env: dict          # {method: exports after the binding lines}
    link_GBps: float          # guard for a pair
    gpu_GBps: float           # guard for a collective (busbw over all of a GPU's links)
    recipe: str = ""
    plugin: str = ""          # NCCL/RCCL network plugin module (the preflight names it)
    net_plugin: str = ""      # its library, which the preflight loads before a ccl launch
    access: list = field(default_factory=list)
    job_options: list = field(default_factory=list)
    modules: list = field(default_factory=list)
    nics: dict = field(default_factory=dict)   # per-task NIC variables, every method
    qos: list = field(default_factory=list)    # [(max nodes, qos)]: --qos by node count
    max_nodes: int = 0                         # the largest job (0: no limit configured)
    mpi_cuda: bool = False                     # gpu-aware-mpi's preflight requires Open MPI's CUDA support
    methods: tuple = METHODS                   # what the site's config offers

    def qos_of(self, nodes):
        return next((q for bound, q in self.qos if nodes <= bound), None)


#: Cray MPICH: GPU support only where MPI gets device buffers
CRAY_HOST = {"MPICH_GPU_SUPPORT_ENABLED": "0"}
CRAY_GPU = {"MPICH_GPU_SUPPORT_ENABLED": "1"}
#: LUMI: cray-python's mpi4py is not linked to the GTL; LUMI's own mpi4py check preloads it
#: (lumi-reframe-tests checks/apps/python/check_mpi4py.py)
LUMI_GPU = {**CRAY_GPU, "LD_PRELOAD": "${CRAY_MPICH_ROOTDIR}/gtl/lib/libmpi_gtl_hsa.so"}
#: cscs-docs nccl_env_vars (2025-11-03) + the paper's NCCL_IGNORE_CPU_AFFINITY
ALPS_NCCL = {"MPICH_GPU_SUPPORT_ENABLED": "0", "NCCL_NET": '"AWS Libfabric"',
             "NCCL_NET_GDR_LEVEL": "PHB", "NCCL_CROSS_NIC": "1", "NCCL_PROTO": "^LL128",
             "FI_CXI_DEFAULT_CQ_SIZE": "131072", "FI_CXI_DEFAULT_TX_SIZE": "16384",
             "FI_CXI_DISABLE_HOST_REGISTER": "1", "FI_CXI_RX_MATCH_MODE": "software",
             "FI_MR_CACHE_MONITOR": "userfaultfd", "NCCL_IGNORE_CPU_AFFINITY": "1",
             # the hang workaround and send/recv channels CSCS's own NCCL check sets (nccl.md)
             "FI_CXI_RDZV_GET_MIN": "0", "FI_CXI_RDZV_THRESHOLD": "0", "FI_CXI_RDZV_EAGER_SIZE": "0",
             "NCCL_NCHANNELS_PER_NET_PEER": "4", **CCL_DEBUG}
#: the paper mode's additions, every node count (blink conf/alps.sh; blink-gpu Makefile.LUMI's
#: RCCL environments): {system: {method: {VAR: value}}}
PAPER_ENV = {
    "alps": {m: {"MPICH_SMP_SINGLE_COPY_MODE": "CMA", "MPICH_MALLOC_FALLBACK": "1"}
             for m in ("host", "staging", "gpu-aware-mpi", "ipc-copy", "ccl")},
    "lumi": {"ccl": {"NCCL_BUFFSIZE": "33554432", "FI_CXI_ATS": "0", "FI_CXI_DEFAULT_CQ_SIZE": "131072"}},
    "leonardo": {},
}
#: cscs-docs nvshmem.md: NVSHMEM's libfabric transport over cxi, CUDA VMM off; no multicast;
#: Cray MPICH carries only the bootstrap's unique id
ALPS_NVSHMEM = {"MPICH_GPU_SUPPORT_ENABLED": "0", "NVSHMEM_REMOTE_TRANSPORT": "libfabric",
                "NVSHMEM_LIBFABRIC_PROVIDER": "cxi", "NVSHMEM_DISABLE_CUDA_VMM": "1",
                "NVSHMEM_DISABLE_NVLS": "1"}
#: NVSHMEM is configured on Alps only (NVIDIA GPUs; Leonardo has no recipe for it yet)
NO_NVSHMEM = tuple(m for m in METHODS if m != "nvshmem")


def selected_methods(system):
    """The methods a site's partitions select (then run or skip with the reason): every method
    whose partition features fit; nvshmem needs +nvgpu, so not on LUMI's MI250X."""
    return NO_NVSHMEM if system == "lumi" else METHODS
LUMI_RCCL = {"MPICH_GPU_SUPPORT_ENABLED": "0", "NCCL_SOCKET_IFNAME": "hsn0,hsn1,hsn2,hsn3",
             "NCCL_NET_GDR_LEVEL": "3", "NCCL_ENABLE_DMABUF_SUPPORT": "1", "CXI_FORK_SAFE": "1",
             "CXI_FORK_SAFE_HP": "1", "FI_CXI_DISABLE_CQ_HUGETLB": "1",
             "NCCL_IGNORE_CPU_AFFINITY": "1", **CCL_DEBUG}

SITES = {
    "alps": Site(
        partition="alps:gh200", slurm_partition="normal", gpus=4,
        gpu_request="--gpus-per-node={}",
        srun=["--mpi=cray_shasta", "--cpu-bind=map_cpu:1,73,145,217"], visible="CUDA_VISIBLE_DEVICES",
        job_options=["--uenv=prgenv-gnu/26.3:v1", "--view=default"],
        env={"MPICH_OFI_NIC_POLICY": "GPU"},
        method_env={"host": CRAY_HOST, "staging": CRAY_HOST, "ipc-copy": CRAY_HOST,
                    "gpu-aware-mpi": CRAY_GPU, "ccl": ALPS_NCCL, "nvshmem": ALPS_NVSHMEM},
        recipe="docs/sites/alps.md", plugin="aws-ofi-nccl", net_plugin="libnccl-net.so",
        link_GBps=150, gpu_GBps=450),
    "leonardo": Site(
        partition="leonardo:booster", slurm_partition="boost_usr_prod", gpus=4,
        gpu_request="--gres=gpu:{}", access=["--exclusive"],
        srun=["--cpus-per-task=8", "--cpu-bind=cores"], visible="CUDA_VISIBLE_DEVICES",
        modules=["gcc/12.2.0", "cuda/12.2", "openmpi/4.1.6--gcc--12.2.0-cuda-12.2",
                 "nccl/2.22.3-1--gcc--12.2.0-cuda-12.2-spack0.22",
                 "python/3.11.6--gcc--12.2.0"],
        env={"OMPI_MCA_pml": "ucx", "OMPI_MCA_coll_hcoll_enable": "0"},
        method_env={"ccl": CCL_DEBUG},
        nics={"UCX_NET_DEVICES": "mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"},
        recipe="docs/sites/leonardo.md", qos=[(64, "normal"), (256, "boost_qos_bprod")],
        max_nodes=256, methods=NO_NVSHMEM, mpi_cuda=True,
        link_GBps=100, gpu_GBps=300),
    "lumi": Site(
        partition="lumi:standard-g", slurm_partition="standard-g", gpus=8,
        gpu_request="--gpus-per-node={}", access=["--exclusive"],
        srun=["--cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,"
              "fe,fe00,fe00000000,fe0000000000"],
        visible="ROCR_VISIBLE_DEVICES",
        modules=["LUMI/25.03", "partition/G", "PrgEnv-gnu", "craype-accel-amd-gfx90a", "rocm",
                 "cray-python", "aws-ofi-nccl/1.18.0-rocm"],
        env={"MPICH_OFI_NIC_POLICY": "GPU", "HSA_ENABLE_SDMA": "0"},
        method_env={"host": CRAY_HOST, "staging": CRAY_HOST, "ipc-copy": CRAY_HOST,
                    "gpu-aware-mpi": LUMI_GPU, "ccl": LUMI_RCCL},
        recipe="docs/sites/lumi.md", plugin="aws-ofi-nccl/1.18.0-rocm", net_plugin="librccl-net.so",
        max_nodes=1024, methods=NO_NVSHMEM,
        link_GBps=200, gpu_GBps=600),
}


def site_env(**extra):
    """The dry-runs' environment: a Slurm account and the payload's venv."""
    return clean_env(SBATCH_ACCOUNT=ACCOUNT, GPUCOMM_PYTHON=VENV_PYTHON, **extra)


def mode_cases(tmp_path_factory, system, mode, venv=True):
    """The test cases of one dry run of every check of ``system`` in ``mode`` (with the account,
    with or without the venv), shared by every test of the session that reads that site and mode
    (test_site_modes, test_first_run, test_internode): filter its cases, never its scripts."""
    extra = {"GPUCOMM_PYTHON": VENV_PYTHON} if venv else {}
    return shared_dry_run(tmp_path_factory, "--system", system, "-c", "checks/", "--mode", mode,
                          SBATCH_ACCOUNT=ACCOUNT, **extra)


def mode_output(tmp_path_factory, system, mode, venv=True):
    """What ReFrame printed in mode_cases' dry run of ``system`` in ``mode``."""
    extra = {"GPUCOMM_PYTHON": VENV_PYTHON} if venv else {}
    return shared_dry_run_output(tmp_path_factory, "--system", system, "-c", "checks/", "--mode", mode,
                                 SBATCH_ACCOUNT=ACCOUNT, **extra)


def preflight_line(site, methods):
    cmd = f"{VENV_PYTHON} -m gpucomm preflight --method {','.join(methods)} --recipe {site.recipe}"
    if "ccl" in methods and site.plugin:
        cmd += f" --plugin {site.plugin}"
    if "ccl" in methods and site.net_plugin:
        cmd += f" --net-plugin {site.net_plugin}"
    if "gpu-aware-mpi" in methods and site.mpi_cuda:
        cmd += " --mpi-cuda"
    return cmd + " || exit $?"


@pytest.fixture(scope="module")
def dry_runs(tmp_path_factory):
    """{system: [test case dicts]} of one dry-run per system, run concurrently."""
    runs = {}
    for system in SITES:
        skip = (INTERNODE_CHECKS + NATIVE_CHECKS + PAIR_MATRIX_CHECKS + HEALTH_CHECKS + NOISE_CHECKS
                + NODESTATE_CHECKS + NICPATH_CHECKS + DATAPATH_CHECKS)
        runs[system] = ["--system", system, "-c", "checks/", "-x", "|".join(skip),
                        "-P", "num_nodes=" + ",".join(map(str, NODES))]
    return dry_run_all(runs, tmp_path_factory, site_env())


def check_name(case):
    return case["name"].split()[0]


def site_checks():
    """The checks this module dry-runs: all but the inter-node ones, the pair matrix and the
    health sweeps (test_health_mode_one_launch_per_operation)."""
    return [c for c in check_classes()
            if c not in INTERNODE_CHECKS + PAIR_MATRIX_CHECKS + HEALTH_CHECKS + NOISE_CHECKS + NICPATH_CHECKS
            + DATAPATH_CHECKS + NODE_JOB_CHECKS]


def nodes_of(case):
    return case.get("num_nodes") or 1


def ranks_per_node(site, case):
    """What a user would run: a pair of GPUs on one node or one GPU on each of two nodes for the
    ping-pong; every GPU (GCD) of every node for the collectives."""
    if case["op"] in PAIR_OPS:
        return 2 if nodes_of(case) == 1 else 1
    return site.gpus


def guard(site, op):
    return site.link_GBps if op in PAIR_OPS else site.gpu_GBps


#: the line that records what Slurm says of a placed multi-node job's switches (site.placement)
TOPOLOGY_LINE = 'scontrol show topology "$SLURM_JOB_NODELIST" > gpucomm_topology.txt 2>&1 || true'


def expected_script(site, case, p=None, placement=(), limit=None, time="0:10:0", gpus=None,
                    srun=None, visible=None, extra_env=None):
    """The script line by line; ``p`` ranks per node, ``placement`` sbatch options, the guard
    ``limit``, the time limit, the GPUs requested, the srun options, the per-task GPU table
    and more exports where not this module's defaults (test_internode.py)."""
    n, p = nodes_of(case), p or ranks_per_node(site, case)
    method, gpu = case["method"], case["method"] != "host"
    lines = ["#!/bin/bash",
             f'#SBATCH --job-name="rfm_{os.path.basename(case["stagedir"])}"',
             f"#SBATCH --ntasks={n * p}",
             f"#SBATCH --ntasks-per-node={p}",
             "#SBATCH --output=rfm_job.out",
             "#SBATCH --error=rfm_job.err",
             f"#SBATCH --time={time}",
             f"#SBATCH --nodes={n}",
             f"#SBATCH --partition={site.slurm_partition}",
             f"#SBATCH --account={ACCOUNT}"]
    lines += [f"#SBATCH {opt}" for opt in site.access]
    if gpu:
        lines.append("#SBATCH " + site.gpu_request.format(gpus or p))
    lines += [f"#SBATCH {opt}" for opt in placement]
    if site.qos_of(n):
        lines.append(f"#SBATCH --qos={site.qos_of(n)}")
    lines += [f"#SBATCH {opt}" for opt in site.job_options]
    lines += [f"module load {m}" for m in site.modules]
    lines += [f"export {k}={v}" for k, v in site.env.items()]
    # per-task binding: one GPU per task, except ipc-copy (peers must see each other's GPU)
    if method != "ipc-copy":
        table = visible or ",".join(map(str, range(site.gpus)))
        lines.append(f"export GPUCOMM_BIND_{site.visible}={table}")
    lines += [f"export GPUCOMM_BIND_{k}={v}" for k, v in site.nics.items()]
    lines += [f"export {k}={v}" for k, v in {**site.method_env.get(method, {}),
                                             **(extra_env or {})}.items()]
    lines.append(preflight_line(site, [method]))
    if nodes_of(case) > 1 and case.get("placement", "any") != "any":
        lines.append(TOPOLOGY_LINE)
    cmd = ["srun", *(srun or site.srun), BIND, VENV_PYTHON, "-m", "gpucomm", case["op"], "--method", method,
           "--sizes", case["sizes"], "--json", "gpucomm_results.json"]
    if case["iters"]:
        cmd += ["--iters", str(case["iters"])]
    if case.get("warmup", -1) >= 0:
        cmd += ["--warmup", str(case["warmup"])]
    if case["op"] == "bw" and case.get("window"):
        cmd += ["--window", str(case["window"])]
    cmd += ["--timeout", watchdog_s(case)]
    if gpu:
        cmd += ["--max-bandwidth", str(limit or guard(site, case["op"]))]
    lines.append(" ".join(cmd + ["--fit-memory"]))  # the check's own sizes: a default sweep
    return lines


def _cases(dry_runs, system, nodes):
    got = [c for c in dry_runs[system] if nodes_of(c) == nodes]
    assert got, f"no {system} test case on {nodes} node(s)"
    return got


@pytest.mark.parametrize("nodes", NODES)
@pytest.mark.parametrize("system", SITES)
def test_job_scripts_line_by_line(dry_runs, system, nodes):
    site, seen = SITES[system], set()
    for case in _cases(dry_runs, system, nodes):
        name = case["display_name"]
        seen.add((check_name(case), case["method"]))
        if case["method"] not in site.methods:  # selected, then skipped with its reason
            assert case["result"] == "skip" and job_script(case) is None, name
            continue
        if (case["op"] in PAIR_OPS and nodes > 2) or (case["method"] == "ipc-copy" and nodes > 1):
            assert case["result"] == "skip", f"{name}: a pair cannot use {nodes} nodes, " \
                "nor IPC copies several nodes"
            assert job_script(case) is None
            continue
        if site.max_nodes and nodes > site.max_nodes:  # no job above the partition's largest
            assert case["result"] == "skip" and job_script(case) is None, name
            continue
        assert case["result"] == "pass", f"{name}: {case['fail_reason']}"
        script = job_script(case)
        assert script is not None, f"{name}: no job script"
        got, want = script.splitlines(), expected_script(site, case)
        for i, (g, w) in enumerate(zip(got, want), 1):
            assert g == w, f"{name}, rfm_job.sh line {i}:\n  got:  {g}\n  want: {w}"
        assert len(got) == len(want), f"{name}: {len(got)} lines, want {len(want)}:\n{script}"
    assert seen == {(c, m) for c in site_checks() for m in selected_methods(system)}


@pytest.mark.parametrize("nodes", (1, 2))
def test_alps_nvshmem_job_script(dry_runs, nodes):
    """nvshmem on Alps, one node (NVLink) and two (Slingshot through NVSHMEM's libfabric
    transport, provider cxi, as cscs-docs' nvshmem.md sets it up): the exports before the
    preflight and the launch, every check that offers the method."""
    cases = [c for c in dry_runs["alps"] if c["method"] == "nvshmem" and nodes_of(c) == nodes]
    assert {check_name(c) for c in cases} == {"PingPongCheck", "BwCheck", "AllReduceCheck", "AllToAllCheck"}
    for case in cases:
        assert case["result"] == "pass", f"{case['display_name']}: {case['fail_reason']}"
        lines = job_script(case).splitlines()
        launch = next(i for i, ln in enumerate(lines) if ln.startswith("srun "))
        exports = ["export MPICH_GPU_SUPPORT_ENABLED=0", "export NVSHMEM_REMOTE_TRANSPORT=libfabric",
                   "export NVSHMEM_LIBFABRIC_PROVIDER=cxi", "export NVSHMEM_DISABLE_CUDA_VMM=1",
                   "export NVSHMEM_DISABLE_NVLS=1"]
        assert lines[launch - 6:launch] == exports + [preflight_line(SITES["alps"], ["nvshmem"])]
        assert f" {case['op']} --method nvshmem " in lines[launch]


def test_nvshmem_between_nodes_needs_a_remote_transport(tmp_path):
    """An environment that names no NVSHMEM remote transport skips nvshmem across nodes, with
    the reason, and still runs it within one node."""
    from types import SimpleNamespace

    from gpucomm.rfm.availability import unavailable
    part = SimpleNamespace(features=["gpu", "nvgpu"], fullname="x:gpu",
                           select_devices=lambda kind: [SimpleNamespace(num_devices=4)])
    env = SimpleNamespace(features=["mpi", "cupy", "nvshmem"], name="e", extras={})
    assert unavailable("nvshmem", "pingpong", part, env, 2) is None
    why = unavailable("nvshmem", "pingpong", part, env, 1, multi_node=True)
    assert why == ("environment e names no NVSHMEM remote transport "
                   "(extras['nvshmem_remote_transport']): nvshmem runs within one node only")
    env.extras["nvshmem_remote_transport"] = "libfabric"
    assert unavailable("nvshmem", "pingpong", part, env, 1, multi_node=True) is None
    env.features = ["mpi", "cupy"]
    assert unavailable("nvshmem", "pingpong", part, env, 2) == \
        "environment e lacks nvshmem (nvshmem needs +mpi +cupy +nvshmem)"
    part.features = ["gpu", "amdgpu"]
    assert unavailable("nvshmem", "pingpong", part, env, 2) == "partition x:gpu lacks +gpu +nvgpu"


def test_alps_lists_every_check():
    out = reframe("--system", "alps", "-c", "checks/", "-l")
    assert out.returncode == 0, out.stdout
    listed = {tuple(line.split()[1:3]) for line in out.stdout.splitlines() if line.startswith("- ")}
    want = {(c, f"%method={m}") for c in site_checks() for m in METHODS}
    assert want <= listed, f"not listed: {sorted(want - listed)}\n{out.stdout}"


def _yaml(system):
    with open(REPO / "config" / "references" / f"{system}.yaml") as fp:
        return yaml.safe_load(fp)


@pytest.mark.parametrize("system", SITES)
def test_checks_resolve_their_references(dry_runs, system):
    """What ReFrame itself resolves for each check (the dry-run's performance stage) is the
    committed YAML's entry: every perf variable the paper measured has its reference, as
    information outside the paper mode (no bounds: test_first_run.py has the paper mode's)."""
    site, refs = SITES[system], _yaml(system)
    checked = 0
    for case in dry_runs[system]:
        if case["result"] != "pass":
            continue
        entry = refs.get(check_name(case), {}).get(site.partition, {})
        if check_name(case) not in refs:  # a check the paper has no figure for (BwCheck)
            assert all(got[1] == 0 for got in case["perfvalues"].values()), case["display_name"]
            continue
        if "num_nodes" in refs.get(check_name(case), {}).get("$index", []):
            entry = entry.get(nodes_of(case), {})
        elif nodes_of(case) != 1:
            pytest.fail(f"{system}.yaml has no num_nodes level but the checks run on several "
                        "nodes: regenerate it (python -m gpucomm.analysis.references)")
        want = entry.get(case["method"], {})
        for var, (value, _lower, _upper, unit) in want.items():
            got = case["perfvalues"][f"{site.partition}:{var}"]
            assert got[1:5] == [value, None, None, unit], f"{case['display_name']} {var}"
            checked += 1
        for key, got in case["perfvalues"].items():
            var = key.rsplit(":", 1)[1]
            if var not in want:
                assert got[1] == 0, f"{case['display_name']}: {var} has a reference the paper lacks"
    assert checked > 0


def _site_config(system):
    spec = importlib.util.spec_from_file_location(f"site_{system}",
                                                  REPO / "config" / "systems" / f"{system}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.site_configuration


@pytest.mark.skipif(not SHARED_CSV.exists(), reason=f"{SHARED_CSV} not found")
@pytest.mark.parametrize("system", SITES)
def test_guard_admits_every_paper_measurement(system):
    """The plausibility guard (--max-bandwidth: busbw of the best iteration above it is an
    error) must let through everything the paper measured on that system: every GPU pair
    (LUMI's Fig. 4 too) for the ping-pong, every collective's bus bandwidth; and it must be the
    nominal figure of paper_reference.md, not a loose bound."""
    (part,) = _site_config(system)["systems"][0]["partitions"]
    extras, site = part["extras"], SITES[system]
    assert (extras["link_bandwidth_GBps"], extras["gpu_bandwidth_GBps"]) == (site.link_GBps,
                                                                              site.gpu_GBps)
    ops = {op for op, _, _ in FIGURES.values()}
    with open(SHARED_CSV, newline="") as fp:
        rows = [r for r in csv.DictReader(fp)
                if r["system"] == system and r["scope"] == "intra" and r["operation"] in ops
                and METHOD_OF[r["method"]] != "host"]
    assert rows
    for r in rows:
        op, size, n = r["operation"], int(r["size_bytes"]), int(r["ranks"])
        best = float(r["goodput_gbps_p95"]) / 8
        busbw = best * busbw_GBps(op, size, 1.0, n) / goodput_GBps(op, size, 1.0, n)
        assert busbw <= guard(site, op), (
            f"{system} {op} {r['method']} {r['gpu_pair'] or ''} {size} B: the paper measured "
            f"{busbw:.1f} GB/s bus bandwidth, above the guard {guard(site, op)} GB/s")


def test_slurm_access_from_environment(monkeypatch):
    for var in ("SBATCH_PARTITION", "SBATCH_ACCOUNT", "SBATCH_QOS", "SBATCH_RESERVATION"):
        monkeypatch.delenv(var, raising=False)
    assert slurm_access("normal") == ["--partition=normal"]
    assert slurm_access("normal", "--exclusive") == ["--partition=normal", "--exclusive"]
    monkeypatch.setenv("SBATCH_ACCOUNT", "g123")
    monkeypatch.setenv("SBATCH_PARTITION", "debug")
    monkeypatch.setenv("SBATCH_QOS", "boost_qos_dbg")
    assert slurm_access("normal") == ["--partition=debug", "--account=g123", "--qos=boost_qos_dbg"]


def _bind(env, *cmd):
    base = {"PATH": os.environ["PATH"]}
    return subprocess.run([BIND, *cmd], env={**base, **env}, capture_output=True, text=True)


@pytest.mark.parametrize("rank_var", ["SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_LOCAL_RANK"])
def test_bind_wrapper_gives_each_task_its_entry(rank_var):
    env = {rank_var: "5", "GPUCOMM_BIND_ROCR_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7",
           "GPUCOMM_BIND_UCX_NET_DEVICES": "mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"}
    out = _bind(env, "sh", "-c", 'echo "$ROCR_VISIBLE_DEVICES $UCX_NET_DEVICES" "$@"', "sh", "a b", "c")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "5 mlx5_1:1 a b c\n"  # modulo the list length; arguments kept as given


def test_bind_wrapper_without_table_or_rank():
    out = _bind({"GPUCOMM_BIND_CUDA_VISIBLE_DEVICES": "2,3"}, "printenv", "CUDA_VISIBLE_DEVICES")
    assert out.stdout == "2\n"  # no launcher variable: local rank 0
    out = _bind({"SLURM_LOCALID": "1"}, "sh", "-c", 'echo "${CUDA_VISIBLE_DEVICES-unset}"')
    assert out.stdout == "unset\n"  # nothing to bind: the environment is left alone
    out = _bind({})
    assert out.returncode == 2 and "usage" in out.stderr


def launch_environments(script):
    """[(methods, {VAR: value})]: each payload launch of a job script with the variables the
    script has exported by then (``export`` and ``unset`` lines followed in order)."""
    env, out = {}, []
    for line in script.splitlines():
        if line.startswith("export "):
            name, value = line[len("export "):].split("=", 1)
            env[name] = value
        elif line.startswith("unset "):
            for name in line.split()[1:]:
                env.pop(name, None)
        elif line.startswith("srun ") and " -m gpucomm " in line:
            words = line.split()
            out.append((words[words.index("--method") + 1].split(","), dict(env)))
    return out


#: the variables only one method's launches may carry (test_health_mode_launches_per_method)
OWN_VARS = {"ccl": ("NCCL_", "FI_CXI_", "FI_MR_"), "nvshmem": ("NVSHMEM_",)}


def test_health_mode_launches_per_method(tmp_path_factory):
    """Alps, health mode: the sweeps only; methods share a launch only where their variables are
    the same: host and staging (GPU support off, one GPU per task), gpu-aware-mpi (GPU support
    on), ipc-copy (every GPU of the node), ccl (NCCL's and libfabric's variables, which Cray
    MPICH reads too); nvshmem, unverified on Alps, left out with its reason.  The old sweep
    merged the methods that did not conflict into one launch: NCCL_*/FI_CXI_*/NVSHMEM_* for the
    MPI methods, no GPU binding, nvshmem inside the ping-pong sweep."""
    cases = {c["display_name"].split(" /")[0]: c for c in mode_cases(tmp_path_factory, "alps", "health")}
    assert sorted(cases) == ["DataPathsCheck", "HealthCheck %operation=allreduce", "HealthCheck %operation=alltoall",
                             "HealthCheck %operation=pingpong", "NodeStateCheck", "PairMatrixCheck %method=ccl",
                             "PairMatrixCheck %method=gpu-aware-mpi", "PairMatrixCheck %method=host",
                             "PairMatrixCheck %method=ipc-copy"]  # nvshmem's pair matrix: acceptance
    site = SITES["alps"]
    groups = [["host", "staging"], ["gpu-aware-mpi"], ["ipc-copy"], ["ccl"]]
    for op in ("pingpong", "allreduce", "alltoall"):
        case = cases[f"HealthCheck %operation={op}"]
        script = job_script(case)
        launches = launch_environments(script)
        assert [m for m, _ in launches] == groups, script
        for methods, env in launches:
            (method,) = set(methods) - {"staging"}
            want = {k: v for k, v in site.method_env[method].items()}
            for var, value in want.items():
                assert env.get(var) == value, f"{op} {method}: {var}"
            for other, prefixes in OWN_VARS.items():
                if other != method:
                    assert not [v for v in env if v.startswith(prefixes)], f"{op} {method}: {env}"
            bound = env.get("GPUCOMM_BIND_CUDA_VISIBLE_DEVICES")
            assert bound == (None if method == "ipc-copy" else "0,1,2,3"), f"{op} {method}"
            assert preflight_line(site, methods) in script
        timeout = f"{max(30.0, float(watchdog_s(case)) / len(groups)):g}"
        assert f"--timeout {timeout} " in script
        assert "launches: host,staging | gpu-aware-mpi | ipc-copy | ccl" in case["descr"]
        assert "left out: nvshmem: unverified on Alps" in case["descr"]
    assert "no reference for HealthCheck on alps:gh200 yet: bring-up in docs/sites/alps.md" in \
        cases["HealthCheck %operation=pingpong"]["descr"]
    assert "--ntasks=4" in job_script(cases["HealthCheck %operation=allreduce"])


def test_health_mode_leonardo_launches(tmp_path_factory):
    """Leonardo: host, staging and gpu-aware-mpi share a launch (Open MPI over UCX, nothing per
    method), ipc-copy has its own (every GPU of the node), ccl its own (NCCL's variables)."""
    health = [c for c in mode_cases(tmp_path_factory, "leonardo", "health")
              if c["name"].startswith("HealthCheck")]
    assert len(health) == 3
    for case in health:
        launches = launch_environments(job_script(case))
        assert [m for m, _ in launches] == [["host", "staging", "gpu-aware-mpi"], ["ipc-copy"], ["ccl"]]
        for methods, env in launches:
            assert ("NCCL_DEBUG_FILE" in env) == (methods == ["ccl"])
            assert env["GPUCOMM_BIND_UCX_NET_DEVICES"] == "mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"
            assert ("GPUCOMM_BIND_CUDA_VISIBLE_DEVICES" in env) == (methods != ["ipc-copy"])


@pytest.mark.parametrize("mode, args", [
    ("acceptance", "--sizes 1:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576"),
    ("paper", "--sizes 1:1G --json gpucomm_results.json --iters 100"),
])
def test_modes(tmp_path_factory, mode, args):
    (case,) = [c for c in mode_cases(tmp_path_factory, "alps", mode)
               if c["name"].split()[0] == "PingPongCheck" and c["method"] == "ccl"]
    srun = job_script(case).splitlines()[-1]
    assert srun.endswith(f"gpucomm pingpong --method ccl {args} --timeout {watchdog_s(case)} "
                         "--max-bandwidth 150 --fit-memory"), srun
