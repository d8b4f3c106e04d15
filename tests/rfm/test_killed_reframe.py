"""A killed ReFrame leaves no payload rank behind, and an MPI start-up that fails ends the job
with the payload's reason: real processes."""

import os
import signal
import subprocess
import time

import pytest

from reframe_helpers import (
    REPO,
    clean_env,
    describe_processes,
    payload_ranks_under,
    reframe_cmd,
    report_cases,
    start_with_ranks,
    wait_for,
)

pytestmark = [pytest.mark.rfm, pytest.mark.mpirun]


@pytest.mark.parametrize("sig, limit", [(signal.SIGTERM, []), (signal.SIGKILL, ["-S", "time_limit=0"])],
                         ids=["SIGTERM", "SIGKILL-no-time-limit"])
def test_killed_reframe_leaves_no_rank(tmp_path, sig, limit):
    """SIGTERM to reframe mid-run (a cron `timeout`): ReFrame cancels its job and the payload
    ranks end within seconds, not at their watchdog's limit.  kill -9 (no cancellation; the
    job's shell and mpirun live on) with no time limit at all: the ranks end within seconds
    too, watching the ReFrame process (rfm.watch)."""
    def run(attempt):
        prefix = tmp_path / f"try{attempt}"
        return reframe_cmd("-c", REPO / "checks", "-n", "^PingPongCheck%method=host", "-S", "sizes=8",
                           *limit, "-r", "--prefix", prefix), prefix

    proc = None
    try:
        proc, _, prefix = start_with_ranks(run, clean_env(GPUCOMM_TEST_HANG="1:8"), output=False, seconds=60)
        time.sleep(1)  # both ranks in the timed loop, rank 1 hung by the hook
        _stop_and_expect_no_rank(proc, sig, prefix)
    finally:
        _kill_left(proc, tmp_path)


def test_reframe_stopped_while_its_ranks_start_leaves_no_rank(tmp_path):
    """SIGTERM to reframe as soon as mpirun runs, its ranks still starting (importing, or in
    MPI_Init, where mpi4py holds the GIL and their watchdog's thread cannot run): no rank, nor
    its start-up sentinel, is left.  CI once saw one left 5 s after such a SIGTERM; this race
    rarely loses here, so tests/payload/test_process_faults.py holds each way it could."""
    argv = reframe_cmd("-c", REPO / "checks", "-n", "^PingPongCheck%method=host", "-S", "sizes=8",
                       "-r", "--prefix", tmp_path)
    proc = subprocess.Popen(argv, cwd=REPO, env=clean_env(GPUCOMM_TEST_HANG="1:8"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: payload_ranks_under(tmp_path, launchers=True), 60), "mpirun never ran"
        _stop_and_expect_no_rank(proc, signal.SIGTERM, tmp_path)
    finally:
        _kill_left(proc, tmp_path)


def _stop_and_expect_no_rank(proc, sig, prefix):
    proc.send_signal(sig)
    proc.wait(timeout=30)
    left = wait_for(lambda: not payload_ranks_under(prefix), 5) or payload_ranks_under(prefix)
    assert left is True, f"payload ranks left running: {describe_processes(left)}"


def _kill_left(proc, where):
    for pid in payload_ranks_under(where, launchers=True):
        os.kill(pid, signal.SIGKILL)
    if proc is not None and proc.poll() is None:
        proc.kill()


def test_failed_mpi_start_up_is_the_checks_reason(tmp_path):
    """Old: with an MPI start-up that fails (a BTL that does not exist) the check ended with
    ReFrame's "job timed out" after its time limit, Open MPI's "MPI_Init failed" unread in
    rfm_job.err.  Now the job ends at once and the check fails naming the MPI start-up."""
    report = tmp_path / "report.json"
    cmd = reframe_cmd("-c", REPO / "checks", "-n", "^PingPongCheck%method=host", "-S", "sizes=8",
                      "-r", "--prefix", tmp_path, "--report-file", report)
    started = time.monotonic()
    subprocess.run(cmd, cwd=REPO, env=clean_env(GPUCOMM_MPIRUN_OPTIONS="--mca btl nonexistent_btl"),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    took = time.monotonic() - started
    (case,) = report_cases(report)
    assert case["result"] == "fail" and case["fail_phase"] == "sanity", case["fail_reason"]
    assert "MPI start-up failed: MPI_Init ended this rank" in case["fail_reason"], case["fail_reason"]
    assert "timed out" not in case["fail_reason"]  # it ended at once, not at its time limit
    print(f"failed MPI start-up judged in {took:.0f} s")
