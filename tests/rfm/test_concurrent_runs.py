"""Two ReFrame runs at once on one machine (issue 31, item 6), as real processes: two nightly runs
started in the same second keep their own directories and reports; a plain run started where
another is under way fails at setup naming it, and the first run passes untouched."""

import json
import subprocess
import sys
import time

import pytest

from gpucomm.rfm.runlock import LOCK_NAME
from reframe_helpers import _MAIN, CONFIG, REPO, clean_env, report_cases

pytestmark = [pytest.mark.rfm, pytest.mark.mpirun]


def start(home, *args):
    cmd = [sys.executable, "-c", _MAIN, "-C", str(CONFIG), *map(str, args)]
    env = clean_env(HOME=home, OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
    return subprocess.Popen(cmd, cwd=REPO, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)


def finish(proc, timeout=300):
    out, _ = proc.communicate(timeout=timeout)
    return proc.returncode, out


def test_two_nightly_runs_in_one_second_keep_their_results(tmp_path):
    """Old: both shared output/<timestamp>/ and both FAILed with a jsondecode error."""
    prefix = tmp_path / "p"
    args = ("-c", "checks/health.py", "-n", "^HealthCheck%operation=pingpong", "--mode", "nightly",
            "-S", "sizes=8", "-r", "--prefix", prefix)
    runs = [start(tmp_path, *args), start(tmp_path, *args)]
    done = [finish(p) for p in runs]
    for rc, out in done:
        assert rc == 0, out[-3000:]
    assert len(list((prefix / "output").iterdir())) == 2
    assert len(list((prefix / "stage").iterdir())) == 2
    reports = sorted((tmp_path / ".reframe" / "reports").glob("gpucomm-run-*.json"))
    assert len(reports) == 2
    assert len({json.loads(r.read_text())["session_info"]["uuid"] for r in reports}) == 2
    for report in reports:
        (case,) = report_cases(report)
        assert case["result"] == "pass", case["fail_reason"]


def test_a_run_started_in_a_busy_prefix_fails_naming_the_other(tmp_path):
    """Old: the second run wiped the first one's stage directory; the first failed with "the
    payload crashed or was killed" and the second overwrote its output."""
    prefix = tmp_path / "p"
    one = ("-c", "checks/pingpong.py", "-n", "^PingPongCheck%method=host", "-S", "sizes=8", "-r",
           "--prefix", prefix)
    # the first run's timed loop lasts its 8 s budget (iterations enough for it: 8 B ping-pongs
    # take microseconds; few warm-up ones, not a tenth of them), so that the second starts while it runs
    first = start(tmp_path, *one, "-S", "budget=8", "-S", "iters=100000000", "-S", "warmup=10",
                  "--report-file", tmp_path / "first.json")
    lock = prefix / "stage" / LOCK_NAME
    deadline = time.monotonic() + 60
    while not (lock.exists() and lock.read_text().strip() == str(first.pid)):
        assert time.monotonic() < deadline and first.poll() is None, "the first run never set up"
        time.sleep(0.2)
    rc, out = finish(start(tmp_path, *one, "--report-file", tmp_path / "second.json"))
    assert first.poll() is None, "the first run ended before the second was refused"
    assert rc != 0, out[-3000:]
    (case,) = report_cases(tmp_path / "second.json")
    assert case["result"] == "fail" and case["fail_phase"] == "setup"
    assert f"another ReFrame run (pid {first.pid}) is using the stage directory" in case["fail_reason"]
    rc, out = finish(first)
    assert rc == 0, out[-3000:]
    (case,) = report_cases(tmp_path / "first.json")
    assert case["result"] == "pass", case["fail_reason"]
    # once the first run is gone, the prefix is free again (a killed run frees it too)
    rc, out = finish(start(tmp_path, *one, "--report-file", tmp_path / "third.json"))
    assert rc == 0, out[-3000:]


def test_the_lock_holds_on_a_full_disk(tmp_path, monkeypatch):
    """The soak's full results folder (bench/results/2026-12-02-cpu-2core/31-fault-soak): the pid
    could not be written, and the run's next test took its own lock for another run's."""
    from gpucomm.rfm import runlock
    monkeypatch.setattr(runlock, "_CLAIMS", {})
    real_open = open

    class Full:
        def __init__(self, path, mode):
            self.fp = real_open(path, mode)

        def __getattr__(self, name):
            return getattr(self.fp, name)

        def fileno(self):
            return self.fp.fileno()

        def write(self, text):
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(runlock, "open", Full, raising=False)
    assert runlock.claim(str(tmp_path)) == ""
    assert runlock.claim(str(tmp_path)) == ""  # the same process: held, not refused
