"""The test fixture's mpirun launch: a job the launcher could not start is tried again; a job
whose ranks ran and failed is returned as it is; a launcher that hangs after PRRTE reported the
job ended is ended with the reported exit code; one that never reports times out."""
import subprocess
import sys
import time

import pytest

import conftest

FLAKY = """
import os, pathlib, sys
count = pathlib.Path(sys.argv[1])
n = int(count.read_text()) if count.exists() else 0
count.write_text(str(n + 1))
assert os.environ["TMPDIR"].startswith("/tmp/gc-mpi-"), os.environ["TMPDIR"]
if n < int(sys.argv[2]):
    sys.stderr.write("The PMIx server's listener thread failed to start. We cannot\\ncontinue.\\n")
    sys.exit(213)
print("ran")
"""


def _run(tmp_path, failures):
    count = tmp_path / "count"
    cmd = [sys.executable, "-c", FLAKY, str(count), str(failures)]
    return conftest._launch(cmd, {"PATH": "/usr/bin:/bin"}, 30), int(count.read_text())


def test_launcher_failure_is_retried(tmp_path, recwarn):
    run, launches = _run(tmp_path, 2)
    assert (run.returncode, run.stdout.strip(), launches) == (0, "ran", 3)
    assert len(recwarn) == 2 and "attempt 1" in str(recwarn[0].message)


def test_persistent_launcher_failure_is_reported(tmp_path):
    with pytest.warns(UserWarning, match="trying again"):
        run, launches = _run(tmp_path, 5)
    assert (run.returncode, launches) == (213, conftest.LAUNCH_ATTEMPTS)


def test_payload_failure_is_not_retried(tmp_path):
    count = tmp_path / "count"
    cmd = [sys.executable, "-c", "import pathlib,sys; p=pathlib.Path(sys.argv[1]);"
           "p.write_text(p.read_text()+'x' if p.exists() else 'x'); sys.exit(2)", str(count)]
    run = conftest._launch(cmd, {"PATH": "/usr/bin:/bin"}, 30)
    assert (run.returncode, count.read_text()) == (2, "x")



ENDED = ("prterun detected that one or more processes exited with non-zero status,\\n"
         "thus causing the job to be terminated. The first process to do so was:\\n\\n"
         "   Process name: [prterun-vm-1@1,3]\\n   Exit code:    4\\n")


def test_a_launcher_hanging_after_the_job_ended_is_ended_with_its_exit_code(monkeypatch):
    monkeypatch.setattr(conftest, "ENDED_GRACE_S", 1)
    script = ("import sys, time; print('records', flush=True); "
              f"sys.stderr.write('{ENDED}'); sys.stderr.flush(); time.sleep(600)")
    t0 = time.monotonic()
    with pytest.warns(UserWarning, match="after the job ended"):
        run = conftest._run_mpirun([sys.executable, "-c", script], None, 120)
    assert run.returncode == 4 and run.stdout == "records\n" and "Exit code:    4" in run.stderr
    assert time.monotonic() - t0 < 100  # not the timeout


def test_a_launcher_that_never_reports_times_out_with_its_output():
    script = "import time; print('started', flush=True); time.sleep(600)"
    with pytest.raises(subprocess.TimeoutExpired) as exc:
        conftest._run_mpirun([sys.executable, "-c", script], None, 2)
    assert exc.value.output == "started\n"


def test_a_launcher_that_ends_gives_its_own_exit_code():
    run = conftest._run_mpirun([sys.executable, "-c", "import sys; print('x'); sys.exit(3)"], None, 60)
    assert (run.returncode, run.stdout, run.stderr) == (3, "x\n", "")
