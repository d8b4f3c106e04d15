"""A killed ReFrame leaves no payload rank behind, and an MPI start-up that fails ends the job
with the payload's reason: real processes."""

import os
import signal
import subprocess
import time

import pytest
from reframe_helpers import REPO, clean_env, reframe_cmd

pytestmark = [pytest.mark.rfm, pytest.mark.mpirun]


def _ranks_under(prefix):
    """pids of the payload processes whose working directory is under ``prefix``."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{name}/cwd")
            cmd = open(f"/proc/{name}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if cwd.startswith(str(prefix)) and b"gpucomm" in cmd and b"pingpong" in cmd:
            pids.append(int(name))
    return pids


def _wait_for(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    return predicate()


def test_killed_reframe_leaves_no_rank(tmp_path):
    """SIGTERM to reframe mid-run (a cron `timeout`): its payload ranks end within seconds,
    not at their watchdog's limit."""
    cmd = reframe_cmd("-c", REPO / "checks", "-n", "^PingPongCheck", "-S", "sizes=8", "-r",
                      "--prefix", tmp_path)
    proc = subprocess.Popen(cmd, cwd=REPO, env=clean_env(GPUCOMM_TEST_HANG="1:8"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert _wait_for(lambda: len(_ranks_under(tmp_path)) >= 2, 60), "the payload never started"
        time.sleep(1)  # both ranks in the timed loop, rank 1 hung by the hook
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        left = _wait_for(lambda: not _ranks_under(tmp_path), 5) or _ranks_under(tmp_path)
        assert left is True, f"payload ranks left running: {left}"
    finally:
        for pid in _ranks_under(tmp_path):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
