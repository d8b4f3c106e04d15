"""``gpucomm --help`` names every command, the payload's operations and the dispatcher's others."""

import os
import subprocess
import sys

import pytest

from gpucomm.main import NODE_ENV, TOOLS, main


def test_help_lists_every_command():
    run = subprocess.run([sys.executable, "-m", "gpucomm", "--help"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    listed = {line.split()[0] for line in run.stdout.split("other commands", 1)[1].splitlines()[1:] if line.strip()}
    assert listed == set(TOOLS)  # old: acceptance, nightly and preflight were missing
    assert "pingpong" in run.stdout and "aggressor" in run.stdout


def test_compute_node_commands_import_numpy_without_a_blas_thread_pool(monkeypatch, capsys):
    """The payload (and probe, preflight) set OPENBLAS_NUM_THREADS=1 where it is unset, before
    numpy's import; a value the user set is kept; the analysis commands leave it alone."""
    for before, after in (({}, NODE_ENV), ({"OPENBLAS_NUM_THREADS": "8"}, {"OPENBLAS_NUM_THREADS": "8"})):
        monkeypatch.setattr(os, "environ", dict(before))
        with pytest.raises(SystemExit):
            main(["--help"])
        assert os.environ == after
    monkeypatch.setattr(os, "environ", {})
    monkeypatch.setitem(TOOLS, "report", ("json:dumps", "report", "an analysis command"))
    assert main(["report"]) == "[]"
    assert os.environ == {}
    capsys.readouterr()
