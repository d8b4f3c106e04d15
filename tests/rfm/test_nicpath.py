"""The network path of one node, per NIC (checks/nicpath.py, rfm.nicpath): each site's job
script pins both ranks to one NIC with the intra-node shortcuts off, one test case per NIC of
extras['nics']; the NCCL log proof (contract.nccl_channels) passes only where every channel
went over the network."""

import re

import pytest
from reframe.core.exceptions import SanityError

from gpucomm.contract import nccl_channels
from gpucomm.rfm.nicpath import cpu_bind_list, mask_cores, network_path_ok, spare_core
from reframe_helpers import job_script, shared_dry_run

SITES = {  # site -> (NIC 1's variables for ccl, for gpu-aware-mpi, NICs, reference note)
    "leonardo": (["NCCL_IB_HCA==mlx5_1"], ["UCX_TLS=rc,cuda_copy", "UCX_NET_DEVICES=mlx5_1:1",
                                          "GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_1:1"], 4, "no reference"),
    "alps": (["FI_CXI_DEVICE_NAME=cxi1"], ["FI_CXI_DEVICE_NAME=cxi1", "MPIR_CVAR_NOLOCAL=1"], 4, "no reference"),
    "lumi": (["FI_CXI_DEVICE_NAME=cxi1"], ["FI_CXI_DEVICE_NAME=cxi1", "MPIR_CVAR_NOLOCAL=1"], 4, "no reference"),
}
#: site -> (the per-task GPU variable, the two ranks' GPUs per NIC: its nearest, from the sites'
#: GPU-NIC maps cited in config/systems/*.py): Alps cscs-docs' GH200 schematic, LUMI lumi-ug's
#: node overview (the two GCDs of the NIC's MI250X), Leonardo the paper's rank order
NEAREST = {"alps": ("CUDA_VISIBLE_DEVICES", ["0,0", "3,3", "1,1", "2,2"]),
           "lumi": ("ROCR_VISIBLE_DEVICES", ["0,1", "2,3", "4,5", "6,7"]),
           "leonardo": ("CUDA_VISIBLE_DEVICES", ["0,0", "1,1", "2,2", "3,3"])}
OFF = ["NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1", "NCCL_DEBUG=INFO"]


def nicpath_cases(tmp_path_factory, site):
    """{display name: test case} of the site's NicPathCheck dry run (the session's shared one)."""
    cases = shared_dry_run(tmp_path_factory, "--system", site, "-c", "checks/nicpath.py",
                           SBATCH_ACCOUNT="x", GPUCOMM_PYTHON="/v/bin/python")
    return {c["display_name"].split(" /")[0]: c for c in cases}


@pytest.mark.parametrize("site", sorted(SITES))
def test_dry_run_pins_one_nic(tmp_path_factory, site):
    ccl_vars, mpi_vars, nics, note = SITES[site]
    cases = nicpath_cases(tmp_path_factory, site)
    ran = sorted(n for n, c in cases.items() if c["result"] == "pass")
    assert len(ran) == nics * len({n.split("%method=")[1] for n in ran}), ran
    assert all(int(n.split("%nic=")[1].split()[0]) < nics for n in ran), ran  # the others skip
    ccl = cases.get("NicPathCheck %nic=1 %method=ccl")
    if ccl is not None and ccl["result"] == "pass":
        script = job_script(ccl)
        for var in ccl_vars + OFF:
            assert f"export {var}\n" in script, (var, script)
        assert "--ntasks=2" in script and "bw --method ccl --sizes 8,1M,64M" in script
        assert "through NIC" in ccl["descr"] and (note is None or note in ccl["descr"])
    # every NIC driven from its nearest GPU(s): one GPU twice (ccl: a host id per rank), or the
    # two GCDs of its MI250X; no figure judges it (CSCS's loopback minimum measures raw RDMA writes)
    visible, nearest = NEAREST[site]
    for name in ran:
        nic, method = int(name.split("%nic=")[1].split()[0]), name.split("%method=")[1].split()[0]
        script, case = job_script(cases[name]), cases[name]
        assert f"export GPUCOMM_BIND_{visible}={nearest[nic]}\n" in script, (name, script)
        shared = len(set(nearest[nic].split(","))) == 1
        assert ("export GPUCOMM_BIND_NCCL_HOSTID=gpucomm-nicpath-0,gpucomm-nicpath-1\n" in script) == \
            (shared and method == "ccl"), name
        assert "(nearest)" in case["descr"] and "no reference" in case["descr"], case["descr"]
        assert all(v[1:4] == [0, None, None] for v in case["perfvalues"].values()), case["perfvalues"]
    mpi = cases.get("NicPathCheck %nic=1 %method=gpu-aware-mpi")
    if mpi is not None and mpi["result"] == "pass":
        script = job_script(mpi)
        for var in mpi_vars:
            assert f"export {var}\n" in script, (var, script)
        assert "NCCL_P2P_DISABLE" not in script


#: site -> (the GPU request's line for N GPUs, the node's GPUs, each GPU's CPU: the cores of its
#: binding entry and of its CPU, or None where the site's binding has no per-GPU entry).
#: Alps: the paper's map_cpu 1,73,145,217 (blink conf/alps.sh), core 72 i + 1 for GPU i, on the
#: Grace of GPU i, cores 72 i .. 72 i + 71 (cscs-docs docs/running/slurm.md).  LUMI: the CCD of
#: each GCD, cores 49-55 for GCD 0 ... 41-47 for GCD 7 (lumi-ug lumig-job.md masks; its node
#: drawing, lumig-node-overview.svg, joins GCD 0 to cores 48-55 ... GCD 7 to 40-47, the first
#: core of each CCD reserved).  Leonardo: --cpus-per-task=8 --cpu-bind=cores, no per-GPU entry.
CCD_OF_GCD = [49, 57, 17, 25, 1, 9, 33, 41]
GPU_CPUS = {
    "alps": ("#SBATCH --gpus-per-node={}", 4, "map_cpu",
             {g: ([72 * g + 1], range(72 * g, 72 * g + 72)) for g in range(4)}),
    "lumi": ("#SBATCH --gpus-per-node={}", 8, "mask_cpu",
             {g: (list(range(c, c + 7)), range(c, c + 7)) for g, c in enumerate(CCD_OF_GCD)}),
    "leonardo": ("#SBATCH --gres=gpu:{}", 4, None, None),
}


@pytest.mark.parametrize("site", sorted(SITES))
def test_each_rank_on_its_gpu_and_its_gpus_cores(tmp_path_factory, site):
    """Issue 54: LUMI's NIC 3 job asked for 2 GPUs (--gpus-per-node=2: Slurm gives GCDs 0 and 1)
    and bound GCDs 6, 7 on CCDs 6, 7's masks; every Alps job put its second rank on another
    Grace (map_cpu:1,73 for GPUs 3,3); Leonardo asked for --gres=gpu:2 and bound GPUs 2,2.  Per
    job: the GPUs requested are the node's, so they cover every GPU bound; each rank's CPU is
    its GPU's, its first rank's the GPU's own binding entry, and no two ranks share a core."""
    request, ngpus, kind, cpus = GPU_CPUS[site]
    cases = nicpath_cases(tmp_path_factory, site)
    ran = {n: c for n, c in cases.items() if c["result"] == "pass"}
    assert len(ran) == 2 * SITES[site][2], sorted(cases)
    for name, case in ran.items():
        lines = job_script(case).splitlines()
        (gpus,) = [ln.split("=", 1)[1] for ln in lines if ln.startswith("export GPUCOMM_BIND_")
                   and ln.split("=", 1)[0].endswith("_VISIBLE_DEVICES")]
        bound = [int(g) for g in gpus.split(",")]
        assert request.format(ngpus) in lines and max(bound) < ngpus, (name, lines)
        assert not [ln for ln in lines if re.match(r"#SBATCH --(gpus-per-node|gres)", ln)
                    and ln != request.format(ngpus)], name
        (srun,) = [ln for ln in lines if ln.startswith("srun ")]
        found = cpu_bind_list(srun.split())
        if kind is None:
            assert found is None and " --cpus-per-task=8 --cpu-bind=cores " in srun, srun
            continue
        assert found and found[0] == kind, srun
        entries = found[1]
        assert len(entries) == 2, srun
        cores = [[int(e)] if kind == "map_cpu" else mask_cores(e) for e in entries]
        first, domain = cpus[bound[0]]
        assert cores[0] == first, (name, srun)
        for gpu, rank_cores in zip(bound, cores):
            assert set(rank_cores) <= set(cpus[gpu][1]), (name, gpu, rank_cores)
        assert len({c for cs in cores for c in cs}) == sum(map(len, cores)) or kind == "mask_cpu", srun
        assert f"CPU {kind} {','.join(entries)}" in case["descr"], case["descr"]


def test_cpu_binding_parts():
    assert cpu_bind_list(["--mpi=cray_shasta", "--cpu-bind=map_cpu:1,73,145,217", "/x/gpucomm-bind"]) == \
        ("map_cpu", ["1", "73", "145", "217"])
    assert cpu_bind_list(["--cpus-per-task=8", "--cpu-bind=cores"]) is None
    assert mask_cores("fe0000") == list(range(17, 24)) and mask_cores("0xfe") == list(range(1, 8))
    assert spare_core(217, range(216, 288), ["217"]) == 218
    assert spare_core(287, range(216, 288), ["287"]) == 216  # the GPU's own CPU, never the next GPU's
    assert spare_core(5, [5], ["5"]) is None


LOG = """host:1:2 [0] NCCL INFO Channel 00/1 : 0[0] -> 1[0] [send] via NET/Socket/0
host:1:2 [0] NCCL INFO Channel 01/1 : 0[0] -> 1[0] [send] via NET/Socket/0
"""


def test_nccl_channels():
    got = nccl_channels(LOG + "x NCCL INFO Channel 02/0 : 1[1] -> 0[0] via P2P/CUMEM/read\n")
    assert [(c["channel"], c["src"], c["dst"], c["direction"], c["transport"]) for c in got] == [
        (0, 0, 1, "send", "NET/Socket/0"), (1, 0, 1, "send", "NET/Socket/0"),
        (2, 1, 0, "", "P2P/CUMEM/read")]


def _evaluate(tmp_path, text, expected="NET/Socket"):
    (tmp_path / "gpucomm_nccl_debug.h.1.log").write_text(text)
    return network_path_ok(str(tmp_path / "gpucomm_nccl_debug.*.log"), expected).evaluate()


def test_network_path_proof(tmp_path):
    assert _evaluate(tmp_path, LOG)
    with pytest.raises(SanityError, match="1 of 3 NCCL channels did not go over NET/Socket: "
                                          "channel 2 1->0 via SHM/direct/direct"):
        _evaluate(tmp_path, LOG + "y NCCL INFO Channel 02/0 : 1[0] -> 0[0] via SHM/direct/direct\n")
    with pytest.raises(SanityError, match="no channel connection"):
        _evaluate(tmp_path, "NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>\n")


def test_no_log_is_no_proof(tmp_path):
    with pytest.raises(SanityError, match="no NCCL debug log"):
        network_path_ok(str(tmp_path / "none.*.log"), "NET/").evaluate()
