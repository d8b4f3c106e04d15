"""The network path of one node, per NIC (checks/nicpath.py, rfm.nicpath): each site's job
script pins both ranks to one NIC with the intra-node shortcuts off, one test case per NIC of
extras['nics']; the NCCL log proof (contract.nccl_channels) passes only where every channel
went over the network."""

import pytest
from reframe.core.exceptions import SanityError

from gpucomm.contract import nccl_channels
from gpucomm.rfm.nicpath import network_path_ok
from reframe_helpers import clean_env, job_script, reframe, report_cases

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


@pytest.mark.parametrize("site", sorted(SITES))
def test_dry_run_pins_one_nic(tmp_path, site):
    ccl_vars, mpi_vars, nics, note = SITES[site]
    report = tmp_path / "report.json"
    out = reframe("--system", site, "-c", "checks/nicpath.py", "--dry-run", "--prefix", tmp_path,
                  "--report-file", report, env=clean_env(SBATCH_ACCOUNT="x", GPUCOMM_PYTHON="/v/bin/python"))
    assert out.returncode == 0, out.stdout[-3000:]
    cases = {c["display_name"].split(" /")[0]: c for c in report_cases(report)}
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
