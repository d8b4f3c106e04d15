"""The payload's files under bad input and faults: --json, --ready-file, and what a run that
cannot measure anything says."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from gpucomm.constants import EXIT_BAD_INPUT, EXIT_CAPABILITY, EXIT_VALIDATION
from gpucomm.contract import ERROR_PREFIX, parse_output

pytestmark = [pytest.mark.payload, pytest.mark.mpirun]


def _errors(stderr):
    return [line for line in stderr.splitlines() if line.startswith(ERROR_PREFIX)]


def test_no_method_can_run_is_no_pass(mpirun):
    """Every method of a launch skipped (no GPU stack here): nothing measured, exit 3, not ok."""
    run = mpirun(2, "pingpong", "--method", "ccl,nvshmem", "--sizes", "8", "--quiet")
    assert run.returncode == EXIT_CAPABILITY, run.stderr
    _, summary = parse_output(run.stdout)
    assert summary["ok"] is False and "none of ccl,nvshmem can run here" in summary["error"]
    assert len(_errors(run.stderr)) == 1


@pytest.mark.parametrize("kind", ["fifo", "empty", "directory"])
def test_json_target_refused_at_start(mpirun, tmp_path, kind):
    """--json to a FIFO (it would block the run's end), '' (nothing written) or a directory:
    one line, exit 2, before MPI starts."""
    target = {"fifo": tmp_path / "fifo", "empty": "", "directory": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(target)
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8", "--json", target, timeout=30)
    assert run.returncode == EXIT_BAD_INPUT, run.stderr
    assert len(_errors(run.stderr)) == 1 and "--json" in run.stderr, run.stderr


def test_failed_run_keeps_an_earlier_json(mpirun, tmp_path):
    """A validation failure leaves an existing --json file as it was (and says so)."""
    path = tmp_path / "old.json"
    path.write_text('{"earlier": true}')
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8", "--json", path, "--quiet",
                 extra_env={"GPUCOMM_TEST_CORRUPT": "1:8"})
    assert run.returncode == EXIT_VALIDATION, run.stderr
    assert json.loads(path.read_text()) == {"earlier": True}
    assert not list(tmp_path.glob("*.tmp"))


def test_validation_failure_with_unwritable_json(tmp_path):
    """The --json folder removed mid-run, then a validation failure: exit 4 with the
    validation line first, the file's line second (not an internal error)."""
    folder = tmp_path / "results"
    folder.mkdir()
    exe = os.path.join(os.path.dirname(sys.executable), "mpirun")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               GPUCOMM_LOOP="mpi4py", GPUCOMM_TEST_CORRUPT="1:16777216")
    with tempfile.TemporaryDirectory(prefix="gc-mpi-", dir="/tmp") as tmp:
        proc = subprocess.Popen([exe, "-np", "2", "--oversubscribe", sys.executable, "-m", "gpucomm",
                                 "pingpong", "--method", "host", "--sizes", "8,16M", "--iters", "100",
                                 "--json", folder / "r.json", "--quiet"],
                                env=dict(env, TMPDIR=tmp), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        for line in proc.stdout:
            if line.startswith("GPUCOMM-RESULT"):
                shutil.rmtree(folder)
                break
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_VALIDATION, err
    lines = _errors(err)
    assert len(lines) == 2, err
    assert "16777216" in lines[0] and "cannot write it" in lines[1], err


def test_ready_file_in_a_missing_folder(mpirun, tmp_path):
    run = mpirun(2, "aggressor", "--method", "host", "--sizes", "8", "--duration", "1",
                 "--ready-file", tmp_path / "no" / "ready", timeout=30)
    assert run.returncode == EXIT_BAD_INPUT, run.stderr
    assert len(_errors(run.stderr)) == 1 and "--ready-file" in run.stderr, run.stderr


def test_budget_without_warmup_refused(mpirun):
    """--warmup 0 leaves --budget nothing to estimate from: one line, exit 2 (it was ignored)."""
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8", "--warmup", "0",
                 "--budget", "0.1", timeout=30)
    assert run.returncode == EXIT_BAD_INPUT, run.stderr
    assert len(_errors(run.stderr)) == 1 and "--budget" in run.stderr, run.stderr
