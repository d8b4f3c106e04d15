"""Running ReFrame from the tests: the repository's config, a scratch prefix, a clean environment."""

import ast
import atexit
import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

from gpucomm.constants import LOOP_ENV, LOOP_MPI4PY

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "config" / "settings.py"
CHECKS = REPO / "checks"
SHARED_CSV = REPO / "src" / "gpucomm" / "data" / "paper_reference.csv"  # the shipped copy

#: the inter-node checks (checks/internode.py), tested in test_internode.py
INTERNODE_CHECKS = ("MultiPingPongCheck", "AllToAllScalingCheck", "AllReduceScalingCheck")

#: the node-health pair matrix (checks/pairmatrix.py), tested in test_pairmatrix.py
PAIR_MATRIX_CHECKS = ("PairMatrixCheck",)

#: the noise study (checks/noise.py, opt-in), tested in test_noise.py
NOISE_CHECKS = ("NoiseCheck",)

#: the node-state check (checks/nodestate.py): no payload, tested in tests/rfm/test_nodestate_check.py
NODESTATE_CHECKS = ("NodeStateCheck",)
#: the network path of one node per NIC (checks/nicpath.py), tested in tests/rfm/test_nicpath.py
NICPATH_CHECKS = ("NicPathCheck",)
#: every GPU's own data paths (checks/datapaths.py), tested in tests/rfm/test_datapaths.py
DATAPATH_CHECKS = ("DataPathsCheck",)
#: the per-node acceptance job (checks/nodejob.py): only under --mode acceptance-node (its node_job),
#: tested in tests/rfm/test_node_job_dry.py and tests/unit/test_node_job.py
NODE_JOB_CHECKS = ("NodeAcceptanceCheck",)

#: ``python -c _MAIN ARGS`` is ``reframe ARGS`` (with reframe_fast's cheaper stack walk)
_MAIN = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import reframe_fast; "
         "reframe_fast.install(); from reframe.frontend.cli import main; sys.argv[0] = 'reframe'; "
         "sys.exit(main())")

#: a configuration file: the repository's, with the local system's probe answering ``patch``
#: (e.g. a GPU node's gpu_count and model), formatted with patch= and config=
FAKE_LOCAL = """
import runpy
import gpucomm.site.probe as probe
_real = probe.node_info
def _node_info():
    info = _real()
    info.update({patch!r})
    return info
probe.node_info = _node_info
site_configuration = runpy.run_path({config!r})["site_configuration"]
"""


#: each ReFrame run of the tests gets a private TMPDIR under this pytest process's own folder
#: (removed at its end), as tests/conftest.py gives each direct mpirun launch: Open MPI's
#: launcher keeps its session directory and PMIx rendezvous there (direct launches once failed
#: to start: "unable to setup a rendezvous point").  CI twice saw a ReFrame run's job without
#: output; whether a shared /tmp did it is not known (400 concurrent launches sharing it all started)
_RFM_TMP = tempfile.mkdtemp(prefix="gc-rfm-", dir="/tmp")
atexit.register(shutil.rmtree, _RFM_TMP, True)


def clean_env(**extra):
    """This process's environment without the knobs that would change a job script (SBATCH_*,
    RFM_*, GPUCOMM_*), results storage off; the Lmod sites (Leonardo, LUMI) are dry-run here without Lmod, which needs
    module conflict resolution off (their configs say so too, once settings.py merges them)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SBATCH_", "SLURM_", "RFM_", "GPUCOMM_"))}
    env["RFM_RESOLVE_MODULE_CONFLICTS"] = "n"
    # config/results.py stores every session in ~/.reframe/reports/gpucomm.db: not the tests'
    # (a test of the storage passes RFM_ENABLE_RESULTS_STORAGE=y and its own RFM_SQLITE_DB_FILE)
    env["RFM_ENABLE_RESULTS_STORAGE"] = "n"
    # the payload's mpi4py timed loop, as the tests' mpirun fixture launches it (tests/conftest.py):
    # each rank of the compiled loop imports numba and loads the loops, a 2-rank launch 3.0 CPU
    # seconds instead of 0.6 here; the local-run files (test_health, _nightly, _internode, _bw,
    # _noise, _local_reframe) took 142 CPU seconds instead of 157.  tests/payload/test_fastloop.py
    # tests that loop; a test that wants it in a ReFrame run passes GPUCOMM_LOOP="auto"
    env[LOOP_ENV] = LOOP_MPI4PY
    env["TMPDIR"] = tempfile.mkdtemp(prefix="r", dir=_RFM_TMP)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def reframe_cmd(*args):
    """argv running this interpreter's ReFrame on the repository's config."""
    return [sys.executable, "-c", _MAIN, "-C", str(CONFIG), *map(str, args)]


def reframe(*args, env=None, timeout=600):
    """Run ReFrame to completion in the repository root: CompletedProcess (text, merged output)."""
    return subprocess.run(reframe_cmd(*args), cwd=REPO, env=env or clean_env(), timeout=timeout,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def dry_runs(runs, tmp_path_factory, env):
    """``reframe --dry-run ARGS`` for every {key: ARGS} at once, each in its own prefix:
    {key: its test cases}."""
    procs = {}
    for key, args in runs.items():
        prefix = tmp_path_factory.mktemp("-".join(map(str, key)) if isinstance(key, tuple) else key)
        cmd = reframe_cmd(*args, "--dry-run", "--prefix", prefix, "--report-file", prefix / "report.json")
        procs[key] = (prefix, subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                                               stderr=subprocess.STDOUT, text=True))
    cases = {}
    for key, (prefix, proc) in procs.items():
        out, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"dry-run {key} failed:\n{out[-4000:]}"
        cases[key] = report_cases(prefix / "report.json")
    return cases


def _shared_folder(tmp_path_factory, args, extra_env):
    """(the folder of a shared dry run, its key): in the session's folder that every pytest-xdist
    worker shares (pytest-of-USER/pytest-N/: every worker's basetemp is below it)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    key = json.dumps([list(map(str, args)), sorted((k, str(v)) for k, v in extra_env.items())])
    return root / "shared-dry-runs" / hashlib.sha1(key.encode()).hexdigest()[:16], key


def shared_dry_run(tmp_path_factory, *args, **extra_env):
    """The test cases of ``reframe ARGS --dry-run`` in ``clean_env(**extra_env)``, run once per
    test session: the first test to ask runs it (under a file lock, in a folder that every
    pytest-xdist worker of the session shares), the others read its report and job scripts.
    Tests that read the same site and mode share one run this way instead of each running its
    own filtered one; they must not write into its stage directories."""
    folder, key = _shared_folder(tmp_path_factory, args, extra_env)
    folder.mkdir(parents=True, exist_ok=True)
    report = folder / "report.json"
    with open(folder / "lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not report.exists():
            (folder / "args.json").write_text(key)
            partial = folder / "partial.json"
            out = subprocess.run(reframe_cmd(*args, "--dry-run", "--prefix", folder / "prefix",
                                             "--report-file", partial),
                                 cwd=REPO, env=clean_env(**extra_env), timeout=600,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            assert out.returncode == 0, f"dry-run {args} failed:\n{out.stdout[-4000:]}"
            (folder / "output.txt").write_text(out.stdout)
            os.replace(partial, report)
    return report_cases(report)


def shared_dry_run_output(tmp_path_factory, *args, **extra_env):
    """What ReFrame printed in the shared dry run of ``args`` (shared_dry_run, run if not yet)."""
    shared_dry_run(tmp_path_factory, *args, **extra_env)
    return (_shared_folder(tmp_path_factory, args, extra_env)[0] / "output.txt").read_text()


def report_cases(report_file):
    """The test cases of a ReFrame JSON run report (--report-file)."""
    with open(report_file) as fp:
        return json.load(fp)["runs"][0]["testcases"]


def assert_precision(case):
    """Every perf variable of a payload check's test case has its precision in the report
    (contract.PRECISION_FIELD, rfm.precision) with sane values: low <= value <= high, samples
    and blocks > 0, a standard error >= 0, one of the three words that stop the sampling."""
    from gpucomm.contract import (
        PREC_BLOCKS,
        PREC_CI,
        PREC_P10,
        PREC_REL_SE,
        PREC_SAMPLES,
        PREC_STOPPED,
        PRECISION_FIELD,
        STOP_WORDS,
    )
    precision = case[PRECISION_FIELD]
    perf = {k.split(":")[-1]: v for k, v in case["perfvalues"].items()}
    assert sorted(precision) == sorted(perf), (precision, perf)
    for name, (value, *_, unit, _) in perf.items():
        prec = precision[name]
        low, high = prec[PREC_CI]
        assert low <= value <= high, (name, value, prec)
        assert prec[PREC_SAMPLES] > 0 and prec[PREC_BLOCKS] > 0 and prec[PREC_REL_SE] >= 0, (name, prec)
        assert prec[PREC_P10] > 0 and prec[PREC_STOPPED] in STOP_WORDS, (name, prec)
        # a time's p10 is below its median, a bandwidth's (the time's p10 inverted) above it
        assert (prec[PREC_P10] <= value) == (unit == "us"), (name, unit, value, prec)


def job_script(case):
    """The rfm_job.sh that a (dry-)run wrote for a test case, or None."""
    path = Path(case["stagedir"] or "") / "rfm_job.sh"
    return path.read_text() if case["stagedir"] and path.exists() else None


#: checks of checks/native.py: they run the site's OSU/nccl-tests, have no method parameter and
#: reproduce no figure of the paper (tests/test_native.py covers them)
NATIVE_CHECKS = ("OsuCheck", "OsuXcclCheck", "NcclTestsCheck")
HEALTH_CHECKS = ("HealthCheck",)
#: the bw check (checks/bw.py), tested in test_bw.py
BW_CHECKS = ("BwCheck",)
NOT_NATIVE = ("-x", "|".join(NATIVE_CHECKS))


def check_classes():
    """Names of the payload checks in checks/ (classes decorated with rfm.simple_test)."""
    names = []
    for path in sorted(CHECKS.glob("*.py")):
        # config.py: the guard (rfm.guard); nodestate.py: the hardware reader; no payload in either
        if path.name in ("native.py", "config.py", "nodestate.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(
                    "simple_test" in ast.unparse(d) for d in node.decorator_list):
                names.append(node.name)
    return names


def watchdog_s(case):
    """The payload's --timeout a check passes for its time limit (rfm.GpucommCheck.set_command)."""
    return f"{max(30.0, 0.9 * float(case['time_limit']) - 15):g}"


#: argv[0]s of the launchers whose command line holds the payload's (``mpirun ... -m gpucomm
#: pingpong``): not ranks
LAUNCHER_NAMES = {b"mpirun", b"mpiexec", b"prterun", b"orterun", b"srun"}


def payload_ranks_under(prefix, launchers=False):
    """pids of the payload ranks (gpucomm pingpong; ``launchers``: and their mpirun) whose
    working directory is under ``prefix``, but for those that have ended (zombies, which the
    container's init reaps a moment later)."""
    pids = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            cwd = os.readlink(f"/proc/{name}/cwd")
            with open(f"/proc/{name}/cmdline", "rb") as fp:
                cmd = fp.read().split(b"\0")
            with open(f"/proc/{name}/stat") as fp:
                ended = fp.read().rpartition(")")[2].split()[0] == "Z"  # a zombie: ended, not yet reaped
        except (OSError, IndexError):
            continue
        if not ended and cwd.startswith(str(prefix)) and b"gpucomm" in cmd and b"pingpong" in cmd \
                and (launchers or os.path.basename(cmd[0]) not in LAUNCHER_NAMES):
            pids.append(int(name))
    return pids


def describe_processes(pids):
    """'pid (name, state S, parent P)' for each of ``pids`` still there: what a test that found
    processes left over says of them."""
    said = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fp:
                stat = fp.read()
        except OSError:
            said.append(f"{pid} (gone)")
            continue
        name, (state, ppid) = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()[:2]
        said.append(f"{pid} ({name}, state {state}, parent {ppid})")
    return ", ".join(said)


def start_with_ranks(argv_of, env, output=True, count=2, seconds=120):
    """Start the run ``argv_of(attempt)`` gives, ``(argv, prefix)``, whose payload hangs
    (GPUCOMM_TEST_HANG), until ``count`` payload ranks run under its prefix: (process, argv,
    prefix).  A run that ended before any rank ran (its launch failed; CI twice saw a run whose
    job had no output) is started once more, with a warning holding its output and its job's
    stderr; a second such run, or one still going without its ranks after ``seconds``, fails the
    test with them.  ``output``: the process's stdout and stderr piped (else discarded)."""
    pipe = dict(stdout=subprocess.PIPE, stderr=subprocess.STDOUT) if output else \
        dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for attempt in range(2):
        argv, prefix = argv_of(attempt)
        proc = subprocess.Popen(argv, cwd=REPO, env=env, text=True, **pipe)
        wait_for(lambda p=proc, d=prefix: len(payload_ranks_under(d)) >= count or p.poll() is not None, seconds)
        if len(payload_ranks_under(prefix)) >= count:
            return proc, argv, prefix
        if proc.poll() is None:
            proc.kill()
        said = _never_started(proc, prefix)
        if attempt or proc.returncode == -signal.SIGKILL:
            raise AssertionError(said)
        warnings.warn(f"{said}: started once more", stacklevel=2)
    raise AssertionError("unreachable")


def _never_started(proc, prefix):
    """What a run whose payload never started printed, and its jobs' stderr."""
    out = proc.communicate(timeout=60)[0] if proc.stdout else "(not kept)"
    jobs = "".join(f"\n--- {p}\n{p.read_text(errors='replace')[-1500:]}"
                   for p in sorted(Path(prefix).rglob("rfm_job.err")))
    return f"the payload never started (exit {proc.returncode}): {(out or '')[-3000:]}{jobs}"


def wait_for(predicate, seconds):
    """``predicate()``'s first true value within ``seconds`` (polled every 0.2 s), else its last."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    return predicate()
