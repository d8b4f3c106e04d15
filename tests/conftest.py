import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # reframe_helpers, for the test modules


def _mpirun():
    here = Path(sys.executable).parent / "mpirun"
    return str(here) if here.exists() else shutil.which("mpirun")


@pytest.fixture(scope="session")
def mpirun():
    """Run ``python -m gpucomm ARGS`` on N ranks: CompletedProcess with text output."""
    exe = _mpirun()
    if exe is None:
        pytest.fail("no mpirun: install the MPI extra (pip install -e '.[mpi,test]')")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               PYTHONUNBUFFERED="1")
    env.pop("GPUCOMM_TEST_CORRUPT", None)
    base_env = env

    def run(n, *args, extra_env=None, timeout=240):
        cmd = [exe, "-np", str(n), "--oversubscribe", sys.executable, "-m", "gpucomm", *map(str, args)]
        return subprocess.run(cmd, env=dict(env, **(extra_env or {})), capture_output=True, text=True,
                              timeout=timeout)

    def script(n, path, *args, env=None, timeout=120):  # python PATH ARGS on N ranks
        cmd = [exe, "-np", str(n), "--oversubscribe", sys.executable, str(path), *map(str, args)]
        return subprocess.run(cmd, env=dict(base_env, **(env or {})), capture_output=True, text=True,
                              timeout=timeout)
    run.script = script
    return run
