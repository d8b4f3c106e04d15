"""Issue 21: the GPU-aware MPI level comes from probing the MPI, not from its name.  Host memory
stands in for device memory (``xp="numpy"``: the probe's own code, every stage validated) under
the real mpirun; GPUCOMM_TEST_GPU_AWARE_PROBE makes rank 0 crash (what a non-CUDA MPI does on
device buffers), hang or send wrong data at one stage."""

import os
import shutil
import sys
from pathlib import Path

import pytest

from gpucomm.constants import GPU_AWARE_FULL, GPU_AWARE_NONE, GPU_AWARE_P2P
from gpucomm.site import gpuaware, siteconf


@pytest.fixture
def exe(mpirun, monkeypatch, tmp_path):
    monkeypatch.setenv("GPUCOMM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(gpuaware.FAULT_ENV, raising=False)
    here = Path(sys.executable).parent / "mpirun"
    return str(here) if here.exists() else shutil.which("mpirun")


def probe(exe, fault=None, timeout=60):
    env = dict(os.environ, **({gpuaware.FAULT_ENV: fault} if fault else {}))
    return gpuaware.probe(exe, ["--oversubscribe"], sys.executable, timeout=timeout, env=env, xp="numpy")


def test_every_stage_passes_on_an_mpi_that_takes_the_buffers(exe):
    res = probe(exe)
    assert res["level"] == GPU_AWARE_FULL, res
    assert res["passed"] == ["p2p", "allreduce", "alltoall"] and res["rc"] == 0


@pytest.mark.parametrize("fault,level,reason", [
    ("p2p:crash", GPU_AWARE_NONE, "p2p on device buffers did not finish"),
    ("allreduce:crash", GPU_AWARE_P2P, "p2p passed; allreduce on device buffers did not finish"),
    ("alltoall:wrong", GPU_AWARE_P2P, "alltoall on device buffers gave wrong data"),
])
def test_a_crash_or_wrong_data_stops_the_level_there(exe, fault, level, reason):
    res = probe(exe, fault)
    assert res["level"] == level and reason in res["reason"], res
    assert not res["timed_out"]


def test_a_hang_is_cut_by_the_time_limit_and_leaves_no_rank_behind(exe):
    res = probe(exe, "allreduce:hang", timeout=5)
    assert res["timed_out"] and res["level"] == GPU_AWARE_P2P, res
    assert "allreduce on device buffers timed out after 5 s" in res["reason"]
    left = [p for p in os.listdir("/proc") if p.isdigit() and gpuaware.TAG in _cmdline(p)]
    assert not left, left


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fp:
            return fp.read().decode(errors="replace")
    except OSError:
        return ""


def test_the_answer_is_cached_but_not_a_timeout(monkeypatch, tmp_path):
    monkeypatch.setenv("GPUCOMM_CACHE_DIR", str(tmp_path))
    calls = []

    def fake(mpirun, options, python, **kw):
        calls.append(options)
        return {"level": GPU_AWARE_FULL, "reason": "x", "passed": [], "timed_out": len(calls) == 1,
                "options": list(options)}
    first = gpuaware.probe_cached("/bin/true", ["-a"], "py", run=fake)
    second = gpuaware.probe_cached("/bin/true", ["-a"], "py", run=fake)
    third = gpuaware.probe_cached("/bin/true", ["-a"], "py", run=fake)
    assert len(calls) == 2 and "cached" not in first and "cached" not in second
    assert third["cached"].startswith(str(tmp_path)) and third["level"] == GPU_AWARE_FULL
    gpuaware.probe_cached("/bin/true", ["-b"], "py", run=fake)  # other options: another answer
    assert len(calls) == 3


GPU_NODE = {"gpu_count": 2, "gpu_vendor": "nvidia", "gpu_bus_ids": ["a", "b"], "python": "py",
            "cupy": {"devices": 2}, "libucx": "/site/libucx/lib",
            "mpi": {"mpirun": "/x/bin/mpirun", "openmpi": True}}


def fake_probe(levels):
    """probe_cached stand-in: candidate options -> level, from the first option's name."""
    calls = []

    def run(mpirun, options, python, extra=()):
        name = "ucx-wheel" if "--mca" in options else "plain"
        calls.append(name)
        return {"level": levels[name], "reason": f"{name} said {levels[name]}", "options": list(options)}
    run.calls = calls
    return run


def test_the_wheel_with_ucx_is_found_p2p_by_probing():
    run = fake_probe({"plain": GPU_AWARE_NONE, "ucx-wheel": GPU_AWARE_P2P})
    got = siteconf.local_gpu_aware(GPU_NODE, probe=run)
    assert run.calls == ["plain", "ucx-wheel"] and got["level"] == GPU_AWARE_P2P
    assert got["options"][:3] == ["--mca", "pml", "ucx"]
    assert got["options"][-2:] == ["-x", "GPUCOMM_GPU_AWARE_MPI=p2p"]


def test_an_mpi_built_with_cuda_is_found_full_and_used_as_it_is():
    # the old rule named the level by the UCX wheel alone: p2p, whatever the MPI
    run = fake_probe({"plain": GPU_AWARE_FULL, "ucx-wheel": GPU_AWARE_P2P})
    got = siteconf.local_gpu_aware(GPU_NODE, probe=run)
    assert run.calls == ["plain"] and got["level"] == GPU_AWARE_FULL
    assert got["options"] == ["-x", "GPUCOMM_GPU_AWARE_MPI=full"]
    # no cupy: no GPU-aware options, the GPU node's binding stays (local_binding_options)
    assert siteconf.local_mpirun_options(dict(GPU_NODE, cupy=None)) == ["--bind-to", "none"]


def test_no_level_no_options_and_no_probe_without_a_gpu():
    run = fake_probe({"plain": GPU_AWARE_NONE, "ucx-wheel": GPU_AWARE_NONE})
    assert siteconf.local_gpu_aware(GPU_NODE, probe=run)["options"] == []
    cpu = dict(GPU_NODE, gpu_count=0, cupy=None)
    got = siteconf.local_gpu_aware(cpu, probe=run)
    assert got["level"] == GPU_AWARE_NONE and "not probed" in got["reason"] and len(run.calls) == 2


def test_an_open_mpi_with_its_own_ucx_is_tried_with_pml_ucx_first(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "lib" / "openmpi").mkdir(parents=True)
    for f in ("bin/mpirun", "lib/openmpi/mca_pml_ucx.so", "lib/libucp.so.0"):
        (tmp_path / f).write_text("")
    node = dict(GPU_NODE, libucx=None, mpi={"mpirun": str(tmp_path / "bin" / "mpirun"), "openmpi": True})
    names = [n for n, _ in siteconf.gpu_aware_candidates(node)]
    assert names == ["pml-ucx", "plain"]
    run = fake_probe({"plain": GPU_AWARE_FULL, "ucx-wheel": GPU_AWARE_FULL})  # pml-ucx: "--mca"
    got = siteconf.local_gpu_aware(node, probe=run)
    assert run.calls == ["ucx-wheel"] and got["name"] == "pml-ucx" and got["level"] == GPU_AWARE_FULL
    assert f"UCX_MODULE_DIR={tmp_path}/lib/ucx" in got["options"]


def test_pml_ucx_built_into_libmpi_is_found(tmp_path):
    """configure builds pml ucx into libmpi (no mca_pml_ucx.so) when UCX is its only need:
    the candidate is still tried first (21-every-method: without it, ob1 moved device memory
    through the host at 2.2 GB/s)."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "lib").mkdir()
    (tmp_path / "bin" / "mpirun").write_text("")
    (tmp_path / "lib" / "libucp.so.0").write_text("")
    (tmp_path / "lib" / "libmpi.so.40").write_bytes(b"\x7fELF...mca_pml_ucx_component\x00...")
    node = dict(GPU_NODE, libucx=None, mpi={"mpirun": str(tmp_path / "bin" / "mpirun"), "openmpi": True})
    assert [n for n, _ in siteconf.gpu_aware_candidates(node)] == ["pml-ucx", "plain"]
    (tmp_path / "lib" / "libmpi.so.40").write_bytes(b"\x7fELF...mca_pml_ob1_component\x00...")
    assert [n for n, _ in siteconf.gpu_aware_candidates(node)] == ["plain"]


def test_coll_ucc_is_tried_first_with_the_nccl_wheel_on_the_library_path(tmp_path, monkeypatch):
    """bench/build/ompi.sh with UCC: coll/ucc reduces device buffers on the GPU (tl/nccl), so
    pml ucx with coll ucc goes first; tl/nccl finds libnccl.so.2 in the nvidia-nccl wheel."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "lib").mkdir()
    (tmp_path / "bin" / "mpirun").write_text("")
    (tmp_path / "lib" / "libucp.so.0").write_text("")
    (tmp_path / "lib" / "libmpi.so.40").write_bytes(
        b"\x7fELF...mca_pml_ucx_component\x00...mca_coll_ucc_component\x00")
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/mpi/lib")
    node = dict(GPU_NODE, libucx=None, libnccl="/site/nvidia/nccl/lib",
                mpi={"mpirun": str(tmp_path / "bin" / "mpirun"), "openmpi": True})
    cands = dict(siteconf.gpu_aware_candidates(node))
    assert list(cands) == ["pml-ucx-ucc", "pml-ucx", "plain"]
    ucc = cands["pml-ucx-ucc"]
    assert ucc[:len(cands["pml-ucx"])] == cands["pml-ucx"]
    assert "coll_ucc_enable" in ucc and "LD_LIBRARY_PATH=/site/nvidia/nccl/lib:/opt/mpi/lib" in ucc
    # no wheel: no library path of its own
    assert not any("LD_LIBRARY_PATH" in o for o in siteconf.ucc_options(None))


def test_user_mpirun_options_come_last_and_bad_quoting_is_one_line():
    from gpucomm.constants import LOCAL_MPIRUN_OPTIONS_ENV
    from gpucomm.errors import GpucommError
    assert siteconf.user_mpirun_options({LOCAL_MPIRUN_OPTIONS_ENV: "--bind-to none -x A=1"}) == [
        "--bind-to", "none", "-x", "A=1"]
    assert siteconf.user_mpirun_options({}) == []
    with pytest.raises(GpucommError, match="GPUCOMM_MPIRUN_OPTIONS=.*No closing quotation"):
        siteconf.user_mpirun_options({LOCAL_MPIRUN_OPTIONS_ENV: "--bind-to 'none"})


def test_open_mpi_on_a_gpu_node_runs_unbound():
    """21-every-method: one core per rank starved NVSHMEM's proxy thread; CPU nodes keep Open
    MPI's default, other MPIs are left alone."""
    gpu = dict(GPU_NODE, mpi={"mpirun": "/x/bin/mpirun", "openmpi": True})
    assert siteconf.local_binding_options(gpu) == ["--bind-to", "none"]
    assert siteconf.local_binding_options(dict(gpu, gpu_count=0)) == []
    assert siteconf.local_binding_options(dict(gpu, mpi={"mpirun": "/x/bin/mpirun", "openmpi": False})) == []
