"""``gpucomm --help`` names every command, the payload's operations and the dispatcher's others."""

import subprocess
import sys

from gpucomm.main import TOOLS


def test_help_lists_every_command():
    run = subprocess.run([sys.executable, "-m", "gpucomm", "--help"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    listed = {line.split()[0] for line in run.stdout.split("other commands", 1)[1].splitlines()[1:] if line.strip()}
    assert listed == set(TOOLS)  # old: acceptance, nightly and preflight were missing
    assert "pingpong" in run.stdout and "aggressor" in run.stdout
