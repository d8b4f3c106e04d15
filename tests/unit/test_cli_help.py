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


@pytest.mark.parametrize("command", ["nightly", "tolerances", "report"])
def test_an_analysis_commands_help_names_it_and_says_whole_sentences(command):
    """Old: tolerances' usage named the program "gpucomm", and the descriptions of tolerances
    and nightly stopped mid-sentence ("the spread of every perf", "and the report's")."""
    run = subprocess.run([sys.executable, "-m", "gpucomm", command, "--help"], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"usage: gpucomm {command} [-h]")
    description = run.stdout.split("\n\n")[1]
    assert description.rstrip().endswith("."), description


def test_an_unknown_command_lists_every_command():
    """Old: `gpucomm nosuch` listed the payload's operations only."""
    run = subprocess.run([sys.executable, "-m", "gpucomm", "nosuch"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and run.stdout == ""
    (line,) = run.stderr.splitlines()
    assert line.startswith("gpucomm: error: invalid choice: 'nosuch': choose an operation (pingpong, ")
    assert all(name in line for name in TOOLS)
