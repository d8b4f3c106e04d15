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



#: a rank stuck in MPI_Init, as far as its watchers can tell: the start-up sentinel armed with no
#: time limit, then the GIL's holder (MPI_Init) stood in for by a sleep; it prints its pid
_STUCK_IN_INIT = ("import os, sys, time; from gpucomm.payload.watchdog import StartupSentinel; "
                  "StartupSentinel(None, 1).start(); print(os.getpid(), flush=True); time.sleep(60)")


@pytest.mark.parametrize("gone", ["launcher", "watched run"])
def test_a_rank_still_in_mpi_init_ends_with_its_launcher_or_run(tmp_path, gone):
    """Old: a rank still in MPI_Init (mpi4py holds the GIL there, so its Watchdog's thread cannot
    run) outlived a launcher killed under it, and the ReFrame run named in GPUCOMM_WATCH_PID,
    until its time limit (none: for ever; CI saw a rank left after a SIGTERM to reframe).  Now
    its start-up sentinel ends it within a second of either going, naming which."""
    watched = subprocess.Popen(["sleep", "60"])
    env = dict(os.environ, GPUCOMM_WATCH_PID=f"{watched.pid}:" if gone == "watched run" else "")
    err = tmp_path / "rank.err"
    launcher = subprocess.Popen(  # the launcher: starts the rank, passes its pid on, waits
        [sys.executable, "-c", "import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', "
         f"{_STUCK_IN_INIT!r}], stderr=open({str(err)!r}, 'w')); p.wait()"],
        env=env, stdout=subprocess.PIPE, text=True)
    rank = None
    try:
        rank = int(launcher.stdout.readline())
        time.sleep(0.5)
        assert _alive(rank), err.read_text()
        (launcher if gone == "launcher" else watched).kill()
        deadline = time.monotonic() + 5
        while _alive(rank) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(rank), f"a rank in MPI_Init outlived its {gone}"
        why = "its launcher" if gone == "launcher" else "the run that launched it"
        assert f"MPI start-up ended in MPI_Init: {why}" in err.read_text(), err.read_text()
    finally:
        for proc in (launcher, watched):
            proc.kill()
            proc.wait()
        if rank is not None and _alive(rank):
            os.kill(rank, signal.SIGKILL)


def test_sentinel_of_a_rank_orphaned_before_mpi_init_ends_with_it(tmp_path):
    """Old: a rank whose launcher was gone before its start-up sentinel forked (its parent init)
    and that then ended in MPI_Init left the sentinel, with the rank's command line, waiting
    LAUNCHER_GRACE_S for init to end (CI: a "payload rank" left 5 s after a SIGTERM to reframe).
    Now a sentinel with no launcher it may end goes with its rank."""
    script = ("import os, time; from gpucomm.payload.watchdog import StartupSentinel\n"
              "launcher = os.getpid()\n"
              "if os.fork(): os._exit(0)\n"  # the launcher goes: the rank is orphaned
              "while os.getppid() == launcher: time.sleep(0.01)\n"
              "s = StartupSentinel(None, 1).start(); print(s._pid, flush=True); os._exit(1)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    sentinel = int(proc.stdout.readline())
    try:
        deadline = time.monotonic() + 2
        while _alive(sentinel) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(sentinel), "the sentinel outlived its rank, waiting on a launcher it cannot end"
    finally:
        if _alive(sentinel):
            os.kill(sentinel, signal.SIGKILL)
        proc.wait()
