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
    "alps": (["FI_CXI_DEVICE_NAME=cxi1"], ["FI_CXI_DEVICE_NAME=cxi1", "MPIR_CVAR_NOLOCAL=1"], 4, None),
    "lumi": (["FI_CXI_DEVICE_NAME=cxi1"], ["FI_CXI_DEVICE_NAME=cxi1", "MPIR_CVAR_NOLOCAL=1"], 4, None),
}
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
