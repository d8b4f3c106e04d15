"""`gpucomm probe` takes no options: an unknown one is exit 2, not ignored."""

import subprocess
import sys

from gpucomm.constants import EXIT_BAD_INPUT


def test_probe_refuses_unknown_option():
    run = subprocess.run([sys.executable, "-m", "gpucomm", "probe", "--no-such-option"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == EXIT_BAD_INPUT
    assert "unrecognized arguments: --no-such-option" in run.stderr and not run.stdout
