"""Issue 9's injections that need no GPU: device buffers handed to an MPI that is not GPU-aware
are refused before any MPI call (host memory standing in for device memory); the refusal is
one line, exit 3, on every rank, and a level that allows the operation lets it run."""

from pathlib import Path

import pytest

from gpucomm.contract import ERROR_PREFIX

STANDIN = (Path(__file__).parents[1] / "device_standin.py")


@pytest.mark.parametrize("level,op,refused", [
    ("0", "pingpong", "MPI is not GPU-aware (level none)"),
    ("p2p", "allreduce", "MPI is not GPU-aware for collectives on device buffers (level p2p)"),
    ("p2p", "alltoall", "MPI is not GPU-aware for collectives on device buffers (level p2p)"),
])
def test_device_buffers_refused_before_the_call(mpirun, level, op, refused):
    run = mpirun.script(2, STANDIN, op, env={"GPUCOMM_GPU_AWARE_MPI": level})
    assert run.returncode == 3, run.stdout + run.stderr
    lines = [ln for ln in run.stderr.splitlines() if ERROR_PREFIX in ln]
    assert len(lines) == 1 and refused in lines[0], run.stderr
    assert "GPUCOMM-RESULT" not in run.stdout and "Traceback" not in run.stderr


@pytest.mark.parametrize("level,op", [("p2p", "pingpong"), ("1", "allreduce")])
def test_a_level_that_allows_the_operation_runs(mpirun, level, op):
    run = mpirun.script(2, STANDIN, op, env={"GPUCOMM_GPU_AWARE_MPI": level})
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("GPUCOMM-RESULT") == 2 and "gpu-aware-mpi: " in run.stdout
