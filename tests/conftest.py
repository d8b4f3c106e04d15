import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # reframe_helpers, for the test modules


def _mpirun():
    here = Path(sys.executable).parent / "mpirun"
    return str(here) if here.exists() else shutil.which("mpirun")


# What Open MPI's PMIx server prints when it could not start the job at all (its
# share/pmix/help-pmix-server.txt, [listener-thread-start] and [listener-failed-start]): no rank
# ran, so the payload's behaviour was not tested.  CI on a 2-CPU machine saw the first once.
LAUNCHER_FAILED = ("listener thread failed to start", "unable to setup a rendezvous point")
LAUNCH_ATTEMPTS = 3


def _launch(cmd, env, timeout):
    """Run an mpirun command line with a private TMPDIR (its own PRRTE session directory and PMIx
    rendezvous files, none left from an earlier launch to collide with); a launch that failed in
    the launcher itself is tried again, up to LAUNCH_ATTEMPTS times, with a warning."""
    for attempt in range(1, LAUNCH_ATTEMPTS + 1):
        with tempfile.TemporaryDirectory(prefix="gc-mpi-", dir="/tmp") as tmp:
            run = subprocess.run(cmd, env=dict(env, TMPDIR=tmp), capture_output=True, text=True,
                                 timeout=timeout)
        output = run.stdout + run.stderr
        if run.returncode == 0 or not any(s in output for s in LAUNCHER_FAILED):
            return run
        if attempt < LAUNCH_ATTEMPTS:
            warnings.warn(f"mpirun failed to start the job (attempt {attempt}), trying again:\n"
                          + output[-600:])
    return run


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
        return _launch(cmd, dict(env, **(extra_env or {})), timeout)

    def script(n, path, *args, env=None, timeout=120):  # python PATH ARGS on N ranks
        cmd = [exe, "-np", str(n), "--oversubscribe", sys.executable, str(path), *map(str, args)]
        return _launch(cmd, dict(base_env, **(env or {})), timeout)
    run.script = script
    return run


# -- groups and markers, declared once ------------------------------------------------------
# tests/unit     no launcher: parsers, formulas, references, report, the layers' import rules
# tests/payload  the payload under mpirun (CPU stand-ins for the GPU paths)
# tests/rfm      ReFrame runs and dry runs of the checks (local system, sites)
# tests/slurm    through a real Slurm (.ci/slurm-up.sh, .ci/cluster-up.sh)
GROUPS = ("unit", "payload", "rfm", "slurm")
#: marker -> (what it needs, how to tell whether it is there)
NEEDS = {
    "mpirun": ("an MPI launcher (pip install -e '.[mpi,test]')", lambda: _mpirun() is not None),
    "chromium": ("headless Chromium (apt-get install chromium)",
                 lambda: bool(shutil.which("chromium") or shutil.which("chromium-browser"))),
}


#: markers a test module sets itself: marker -> what it needs (the module skips or fails)
OWN_MARKERS = {
    "cluster": "the 4-node Slurm cluster of .ci/cluster-up.sh (tests/slurm/test_cluster.py); "
               "skipped without it, a failure with GPUCOMM_REQUIRE_CLUSTER=1 (.ci/run)",
}


def pytest_configure(config):
    for group in GROUPS:
        config.addinivalue_line("markers", f"{group}: tests of the {group} group (tests/{group}/)")
    for name, what in OWN_MARKERS.items():
        config.addinivalue_line("markers", f"{name}: needs {what}")
    for name, (what, _) in NEEDS.items():
        config.addinivalue_line("markers", f"{name}: needs {what}; skipped without it")


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    have = {}
    for item in items:
        rel = Path(str(item.fspath)).resolve().relative_to(here)
        if rel.parts and rel.parts[0] in GROUPS:
            item.add_marker(getattr(pytest.mark, rel.parts[0]))
        if "mpirun" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.mpirun)
        for name, (what, present) in NEEDS.items():
            if item.get_closest_marker(name) is None:
                continue
            if name not in have:
                have[name] = present()
            if not have[name]:
                item.add_marker(pytest.mark.skip(reason=f"needs {what}"))
