"""The payload under process faults, as real processes: a launcher killed under its ranks, an
MPI start-up that fails."""

import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest

pytestmark = [pytest.mark.payload, pytest.mark.mpirun]


def _children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fp:
            return [int(p) for p in fp.read().split()]
    except OSError:
        return []


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fp:
            return fp.read()
    except OSError:
        return b""


def _name(pid):
    try:
        with open(f"/proc/{pid}/comm") as fp:
            return fp.read().strip()
    except OSError:
        return None


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as fp:
            return fp.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_ranks_end_when_their_launcher_is_killed(mpirun):
    """kill -9 of mpirun's prterun (as a killed ReFrame job's process group): the ranks, left
    with parent 1, end within seconds instead of at their watchdog's limit (none here)."""
    exe = os.path.join(os.path.dirname(sys.executable), "mpirun")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               GPUCOMM_TEST_HANG="1:8", GPUCOMM_LOOP="mpi4py")
    with tempfile.TemporaryDirectory(prefix="gc-mpi-", dir="/tmp") as tmp:
        proc = subprocess.Popen([exe, "-np", "2", "--oversubscribe", sys.executable, "-m", "gpucomm",
                                 "pingpong", "--method", "host", "--sizes", "8", "--quiet"],
                                env=dict(env, TMPDIR=tmp), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        ranks, launcher = [], proc.pid
        try:
            deadline = time.monotonic() + 30
            while len(ranks) < 2 and time.monotonic() < deadline:
                # the wheel's mpirun runs prterun as its child (or is it, where it execs)
                launcher = next((c for c in _children(proc.pid) if _name(c) == "prterun"), proc.pid)
                ranks = [c for c in _children(launcher) if b"gpucomm" in _cmdline(c)]
                time.sleep(0.2)
            assert len(ranks) == 2, "the ranks never started"
            for line in proc.stdout:  # rank 0's header is out once both have set up
                if line.startswith("# timer="):
                    break
            time.sleep(1)  # in the timed loop: rank 1 hung by the hook, rank 0 in a barrier
            os.kill(launcher, signal.SIGKILL)
            proc.communicate(timeout=20)
            deadline = time.monotonic() + 5
            while any(map(_alive, ranks)) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not any(map(_alive, ranks)), "a rank outlived its launcher"
        finally:
            for pid in ranks:
                if _alive(pid):
                    os.kill(pid, signal.SIGKILL)


def test_failed_mpi_init_says_so_and_ends(mpirun):
    """An MPI start-up that fails (a BTL that does not exist): the job ends, with Open MPI's
    own message and one payload line saying the rank ended in MPI start-up (Open MPI's launcher
    sometimes waited for ever here)."""
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8",
                 extra_env={"OMPI_MCA_btl": "nonexistent_btl"}, timeout=30)
    assert run.returncode != 0
    assert "MPI start-up failed: MPI_Init ended this rank" in run.stderr

