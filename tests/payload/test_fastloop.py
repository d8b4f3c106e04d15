"""The MPI methods' compiled timed loop (payload.fastloop, --loop): taken where numba-mpi loads,
the data validated as with mpi4py's; the mpi4py loop with its reason where it does not (numba-mpi
missing, an operation or a method it does not serve); --loop numba-mpi that cannot be had is a
capability error in one line; the record and the meta name the loop (contract.TIMED_LOOP)."""

import json
import textwrap

import numpy as np
import pytest

from gpucomm.constants import (
    EXIT_BAD_INPUT,
    EXIT_CAPABILITY,
    EXIT_VALIDATION,
    LOOP_AUTO,
    LOOP_ENV,
    LOOP_MPI4PY,
    LOOP_NUMBA_MPI,
)
from gpucomm.contract import ERROR_PREFIX, TIMED_LOOP, TIMED_LOOP_NOTE, read_run
from gpucomm.errors import GpucommError
from gpucomm.payload import fastloop

AUTO = {LOOP_ENV: LOOP_AUTO}
#: a sitecustomize that makes numba and numba-mpi unimportable (a payload venv without [fast])
NO_NUMBA = textwrap.dedent("""
    import sys
    class _Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("numba", "numba_mpi"):
                raise ImportError(f"No module named {name!r} (blocked)")
    sys.meta_path.insert(0, _Block())
""")


def _numba_mpi_installed():
    try:
        import numba_mpi  # noqa: F401  (the test extra installs gpucomm[fast])
    except ImportError:
        pytest.fail("numba-mpi is not installed: pip install -e '.[mpi,test]' (the test extra has [fast])")


def _no_numba_env(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(NO_NUMBA)
    import os
    return dict(AUTO, PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))


@pytest.mark.parametrize("op,method", [("pingpong", "host"), ("bw", "host"), ("pingpong", "gpu-aware-mpi"),
                                       ("bw", "gpu-aware-mpi")])
def test_compiled_loop_taken_and_validated(mpirun, tmp_path, op, method):
    """numba-mpi installed, --loop auto: the compiled loop runs (no warm-up: the first message is
    the compiled loop's), every size's received data validated; record and meta say so."""
    _numba_mpi_installed()
    out = tmp_path / "r.json"
    run = mpirun(2, op, "--method", method, "--backend", "numpy", "--sizes", "1,8,4K,1M",
                 "--iters", "40", "--warmup", "0", "--json", out, extra_env=AUTO)
    assert run.returncode == 0, run.stderr
    records, summary = read_run(run.stdout)
    assert summary["ok"] and summary["validated"] == 4
    for rec in records.values():
        assert rec["validated"] and rec[TIMED_LOOP] == LOOP_NUMBA_MPI and TIMED_LOOP_NOTE not in rec
    meta = json.loads(out.read_text())["meta"]
    assert meta[TIMED_LOOP] == LOOP_NUMBA_MPI and meta["mpi_requests"] == "plain"
    assert f"timed-loop={LOOP_NUMBA_MPI}" in run.stdout


def test_compiled_loop_multi_pingpong(mpirun):
    _numba_mpi_installed()
    run = mpirun(4, "multi-pingpong", "--method", "host", "--ranks-per-node", "2", "--sizes", "8,64K",
                 "--iters", "20", extra_env=AUTO)
    assert run.returncode == 0, run.stderr
    records, summary = read_run(run.stdout)
    assert summary["ok"] and all(r[TIMED_LOOP] == LOOP_NUMBA_MPI and r["validated"] for r in records.values())


def test_compiled_loop_still_catches_bad_data(mpirun):
    """Validation is the same after a compiled loop: a corrupted element fails the run."""
    _numba_mpi_installed()
    env = dict(AUTO, GPUCOMM_TEST_CORRUPT="1:4096")
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8,4K", "--iters", "20", extra_env=env)
    assert run.returncode == EXIT_VALIDATION
    assert "size 4096 B" in run.stderr and "Traceback" not in run.stderr


def test_fallback_without_numba_mpi(mpirun, tmp_path):
    """numba-mpi not importable: --loop auto times the mpi4py loop and says why (record, meta,
    header); --loop numba-mpi is a capability error in one line."""
    env = _no_numba_env(tmp_path)
    out = tmp_path / "r.json"
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8,4K", "--iters", "20", "--json", out,
                 extra_env=env)
    assert run.returncode == 0, run.stderr
    records, summary = read_run(run.stdout)
    assert summary["ok"]
    for rec in records.values():
        assert rec["validated"] and rec[TIMED_LOOP] == LOOP_MPI4PY
        assert rec[TIMED_LOOP_NOTE].startswith("numba-mpi is not installed") and "gpucomm[fast]" in rec[TIMED_LOOP_NOTE]
    meta = json.loads(out.read_text())["meta"]
    assert meta[TIMED_LOOP] == LOOP_MPI4PY and meta["mpi_requests"] == "persistent"
    assert f"timed-loop={LOOP_MPI4PY} (numba-mpi is not installed" in run.stdout
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8", "--loop", LOOP_NUMBA_MPI, extra_env=env)
    assert run.returncode == EXIT_CAPABILITY
    assert f"{ERROR_PREFIX} --loop numba-mpi: numba-mpi is not installed" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("args,ranks,note", [
    (["pingpong", "--method", "host", "--loop", "mpi4py"], 2, "--loop mpi4py"),
    (["allreduce", "--method", "host"], 2, "allreduce: no compiled loop"),
    (["pingpong", "--method", "staging", "--backend", "numpy"], 2, "staging: each message's device copies"),
])
def test_mpi4py_loop_with_its_reason(mpirun, args, ranks, note):
    """Where the compiled loop does not serve (asked for mpi4py, a collective, staging), the
    record names mpi4py's loop and why, whether or not numba-mpi is installed."""
    run = mpirun(ranks, *args, "--sizes", "8", "--iters", "20", extra_env=AUTO)
    assert run.returncode == 0, run.stderr
    records, _ = read_run(run.stdout)
    assert records[8][TIMED_LOOP] == LOOP_MPI4PY and records[8][TIMED_LOOP_NOTE].startswith(note)


def test_loop_option_and_variable_bad_values(mpirun):
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8", extra_env={LOOP_ENV: "fast"})
    assert run.returncode == EXIT_BAD_INPUT
    assert f"{LOOP_ENV}='fast': choose one of auto, numba-mpi, mpi4py" in run.stderr
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8", "--loop", "numba")
    assert run.returncode == EXIT_BAD_INPUT and "--loop: invalid choice" in run.stderr


def test_mpi_error_code_becomes_a_gpucomm_error():
    """A compiled loop returns the MPI error code; check() names the call and the MPI's text."""
    class FakeMPI:
        @staticmethod
        def Get_error_string(code):
            return "MPI_ERR_RANK: invalid rank"
    loop = fastloop.FastLoop.__new__(fastloop.FastLoop)
    loop.MPI = FakeMPI
    loop.check(0, "ping")
    with pytest.raises(GpucommError, match=r"ping \(compiled loop\): MPI error 6 \(MPI_ERR_RANK: invalid rank\)"):
        loop.check(6, "ping")


def test_address_of_host_and_device_arrays():
    a = np.zeros(16, dtype=np.uint8)
    assert fastloop.address(a) == a.ctypes.data
    assert fastloop.address(a[4:]) == a.ctypes.data + 4

    class DeviceArray:  # what cupy exposes: the CUDA array interface
        __cuda_array_interface__ = {"data": (0x7F0000001000, False), "shape": (16,), "typestr": "|u1"}
    assert fastloop.address(DeviceArray()) == 0x7F0000001000


def test_one_compile_serves_a_sweep(mpirun):
    """host and gpu-aware-mpi in one launch: both time the compiled loop (compiled once)."""
    _numba_mpi_installed()
    run = mpirun(2, "pingpong", "--method", "host,gpu-aware-mpi", "--backend", "numpy", "--sizes", "8",
                 "--iters", "20", extra_env=AUTO)
    assert run.returncode == 0, run.stderr
    from gpucomm.contract import parse_output
    records, summary = parse_output(run.stdout)
    assert summary["ok"] and [(r["method"], r[TIMED_LOOP]) for r in records] == [
        ("host", LOOP_NUMBA_MPI), ("gpu-aware-mpi", LOOP_NUMBA_MPI)]


def test_gpu_aware_mpi_keeps_mpi4py_loop_on_device_buffers_under_auto():
    """The compiled loop measured slower on device buffers (19-nvshmem-bw): auto keeps mpi4py's,
    an explicit --loop numba-mpi still gets the compiled one, host buffers are compiled."""
    from types import SimpleNamespace as NS

    from gpucomm.payload.methods.gpu_aware_mpi import NOT_COMPILED_DEVICE, GpuAwareMpiMethod

    def why(is_device, loop):
        return GpuAwareMpiMethod.not_compiled(NS(be=NS(is_device=is_device), ctx=NS(loop=loop)))

    assert why(True, "auto") == NOT_COMPILED_DEVICE and why(True, None) == NOT_COMPILED_DEVICE
    assert why(True, LOOP_NUMBA_MPI) is None and why(False, "auto") is None
