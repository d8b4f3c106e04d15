"""The test fixture's mpirun launch: a job the launcher could not start is tried again; a job
whose ranks ran and failed is returned as it is."""
import sys

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
