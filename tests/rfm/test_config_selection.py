"""Which checks a run selects, and that a run which can test nothing says so (issue 18):
ReFrame without gpucomm's configuration fails with the line that loads it; a GPU partition
whose environment lacks CuPy or NCCL skips the GPU checks with the reason instead of losing them
at selection; an environment without MPI fails."""

import subprocess
import sys

import pytest

from reframe_helpers import _MAIN, CONFIG, FAKE_LOCAL, REPO, clean_env, reframe, report_cases

ROOT_OK = dict(OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)


def bare_reframe(*args, env=None):
    """ReFrame as the user's card runs it: no -C."""
    cmd = [sys.executable, "-c", _MAIN, *map(str, args)]
    return subprocess.run(cmd, cwd=REPO, env=env or clean_env(), timeout=300, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def test_without_the_configuration_the_run_fails_saying_how_to_load_it(tmp_path):
    run = bare_reframe("-c", "checks/", "-r", "--prefix", tmp_path)
    assert run.returncode != 0, run.stdout[-3000:]
    assert "PASSED" not in run.stdout
    assert "Ran 1/1 test case(s)" in run.stdout and "1 failure(s)" in run.stdout
    assert f"export RFM_CONFIG_FILES={CONFIG}" in run.stdout


def test_env_sh_loads_the_configuration_for_the_cards_form(tmp_path):
    out = subprocess.run(["bash", "-c", f". {REPO}/env.sh && echo $RFM_CONFIG_FILES"], cwd=tmp_path,
                         env=clean_env(), text=True, stdout=subprocess.PIPE, check=True).stdout
    assert out.strip() == str(CONFIG)
    run = bare_reframe("-c", "checks/", "-l", "--prefix", tmp_path,
                       env=clean_env(RFM_CONFIG_FILES=out.strip()))
    assert run.returncode == 0, run.stdout[-3000:]
    assert "- PingPongCheck %method=host" in run.stdout
    assert "GpucommConfigCheck" not in run.stdout  # the guard only where the config is missing


def test_the_readmes_card_form_loads_the_configuration(tmp_path):
    """The README's export line, then `reframe -c checks/` as the card writes it."""
    readme = (REPO / "README.md").read_text()
    (export,) = [ln.split("#")[0].strip() for ln in readme.splitlines()
                 if ln.startswith("export RFM_CONFIG_FILES=")]
    script = f"cd {REPO} && {export} && exec {sys.executable} -c \"$MAIN\" -c checks/ -l --prefix {tmp_path}"
    run = subprocess.run(["bash", "-c", script], env=clean_env(MAIN=_MAIN), text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:]
    assert f"settings files:    '<builtin>', '{CONFIG}'" in run.stdout
    assert "- PingPongCheck %method=host" in run.stdout


#: a node whose probe finds 2 GPUs (the partition's features say gpu) but no CuPy
GPU_NO_CUPY = {"gpu_vendor": "nvidia", "gpu_count": 2, "gpu_model": "NVIDIA H200",
               "gpu_slug": "h200", "cupy": None}


def fake_local(tmp_path, patch):
    path = tmp_path / "fake_settings.py"
    path.write_text(FAKE_LOCAL.format(patch=patch, config=str(CONFIG)))
    return path


def test_gpu_partition_without_cupy_skips_the_gpu_checks_with_the_reason(tmp_path):
    """The host check runs and passes its sanity; its performance is not judged
    (--skip-performance-check): the fake partition's references are the GPU node's, and no test
    judges this machine's speed (old: 18.4 us against the GPU node's 3.0 us failed CI)."""
    report = tmp_path / "report.json"
    run = bare_reframe("-C", fake_local(tmp_path, GPU_NO_CUPY), "-c", "checks/pingpong.py", "-r",
                       "--skip-performance-check", "--prefix", tmp_path / "p", "--report-file", report,
                       "-S", "sizes=8", "-S", "iters=10", env=clean_env(**ROOT_OK))
    cases = {c["display_name"].split(" /")[0]: c for c in report_cases(report)}
    assert sorted(cases) == [f"PingPongCheck %method={m}" for m in
                             sorted(["host", "staging", "gpu-aware-mpi", "ipc-copy", "ccl", "nvshmem"])], \
        run.stdout[-3000:]
    for method, lacks in (("staging", "cupy"), ("ipc-copy", "cupy"),
                          ("gpu-aware-mpi", "gpu-aware-mpi, cupy"), ("ccl", "cupy, nccl")):
        assert cases[f"PingPongCheck %method={method}"]["result"] == "skip"
        # ReFrame prints a skip's reason on its SKIP line (its report keeps none)
        (line,) = [ln for ln in run.stdout.splitlines() if "SKIP" in ln and f"%method={method} " in ln]
        assert f"[environment default lacks {lacks} ({method} needs " in line, line
    assert cases["PingPongCheck %method=host"]["result"] == "pass", run.stdout[-3000:]


def test_environment_without_mpi_fails_instead_of_a_green_empty_run(tmp_path):
    report = tmp_path / "report.json"
    no_mpi = {"mpi": {"mpirun": None, "version": None, "openmpi": False}}
    run = bare_reframe("-C", fake_local(tmp_path, no_mpi), "-c", "checks/", "-r", "--prefix", tmp_path / "p",
                       "--report-file", report)
    assert run.returncode != 0, run.stdout[-3000:]
    cases = report_cases(report)
    assert cases and all(c["result"] == "fail" for c in cases)
    assert all("environment default has no MPI" in c["fail_reason"] for c in cases)


# -- bad -S values fail the run with the reason (never a silent 0/0 or a skip) ----------------

def fake_gpu_run(tmp_path, *args):
    """A dry run on the fake GPU partition (every GPU check selected): its test cases, stdout."""
    report = tmp_path / "report.json"
    run = bare_reframe("-C", fake_local(tmp_path, GPU_NO_CUPY), *args, "--dry-run",
                       "--prefix", tmp_path / "p", "--report-file", report, env=clean_env(**ROOT_OK))
    return run, report_cases(report) if report.exists() else []


def test_max_nodes_below_two_fails_the_scaling_checks(tmp_path):
    run, cases = fake_gpu_run(tmp_path, "-c", "checks/internode.py", "-n", "ScalingCheck",
                              "-S", "max_nodes=-3")
    assert run.returncode != 0, run.stdout[-3000:]
    assert len(cases) == 4  # all-to-all, all-reduce x ccl, gpu-aware-mpi: their 2-node variant
    for case in cases:
        assert case["result"] == "fail" and "-S max_nodes=-3: must be >= 2" in case["fail_reason"]


def test_max_nodes_still_limits_the_generated_counts(tmp_path):
    run, cases = fake_gpu_run(tmp_path, "-c", "checks/internode.py", "-n", "AllReduceScalingCheck%method=ccl",
                              "-S", "max_nodes=4")
    assert sorted(c["num_nodes"] for c in cases) == [2, 4], run.stdout[-3000:]


def test_unknown_health_method_fails_instead_of_skipping(tmp_path):
    report = tmp_path / "report.json"
    run = reframe("-c", "checks/health.py", "-r", "-S", "methods=banana", "--prefix", tmp_path,
                  "--report-file", report, env=clean_env(**ROOT_OK))
    assert run.returncode != 0
    cases = report_cases(report)
    assert len(cases) == 3 and all(c["result"] == "fail" for c in cases)
    assert all("-S methods=banana: unknown banana" in c["fail_reason"] for c in cases)


@pytest.mark.parametrize("setvar, reason", [
    ("sizes=1:banana", "-S sizes=1:banana"),
    ("iters=-5", "-S iters=-5: must be >= 0"),
    ("budget=-1", "-S budget=-1.0: must be >= 0"),
    ("budget=inf", "-S budget=inf: must be a finite number"),
    ("graph=maybe", "-S graph=maybe: choose auto, on or off"),
    ("placement=next-door", "-S placement=next-door: choose any"),
    ("num_nodes=0", "-S num_nodes=0: must be >= 1"),
    ("service_level=-5", "-S service_level=-5: an InfiniBand service level is 0 to 15"),
    ("service_level=3", "-S service_level=3: partition local:cpu has no InfiniBand service level"),
    ("PairMatrixCheck.perf_sizes=big", "-S perf_sizes=big"),
    # old: the default 1,000 iterations without a word (a misspelled check, not variable)
    ("PingpongCheck.iters=5", "-S PingpongCheck.iters: no check of this run is called PingpongCheck "
                              "(PingPongCheck?): ReFrame ignores it without a word and runs the default"),
    ("validate_every=-1", "-S validate_every=-1: must be >= 0"),
    ("validate_sizes=1:banana", "-S validate_sizes=1:banana"),
])
def test_bad_setvar_fails_every_selected_check(tmp_path, setvar, reason):
    report = tmp_path / "report.json"
    run = reframe("-c", "checks/pingpong.py", "-c", "checks/pairmatrix.py", "-n", "%method=host",
                  "--dry-run", "-S", setvar, "--prefix", tmp_path, "--report-file", report,
                  env=clean_env(**ROOT_OK))
    assert run.returncode != 0, run.stdout[-2000:]
    cases = [c for c in report_cases(report) if c["result"] == "fail"]
    assert cases and all(reason in c["fail_reason"] for c in cases), [c["fail_reason"] for c in cases]


def test_bad_boolean_or_typed_setvar_stops_the_run(tmp_path):
    run = reframe("-c", "checks/pingpong.py", "-l", "-S", "preflight=banana", "--prefix", tmp_path)
    assert run.returncode == 2 and "-S preflight='banana': preflight takes" in run.stdout
    assert "Traceback" not in run.stdout


def test_boolean_setvar_n_means_false(tmp_path):
    run = reframe("-c", "checks/pingpong.py", "-n", "^PingPongCheck%method=host", "--describe",
                  "-S", "preflight=n", "-S", "emulate_nodes=n", "-S", "paper_tuning=n", "--prefix", tmp_path)
    assert run.returncode == 0, run.stdout[-2000:]
    for name in ("preflight", "emulate_nodes", "paper_tuning"):
        assert f'"{name}": false' in run.stdout


def test_tool_dir_that_does_not_exist_fails(tmp_path):
    report = tmp_path / "report.json"
    run = reframe("-c", "checks/native.py", "-n", "OsuCheck%bench=osu_latency%buffers=host", "--dry-run",
                  "-S", "tool_dir=/nonexistent/osu", "--prefix", tmp_path, "--report-file", report,
                  env=clean_env(**ROOT_OK))
    assert run.returncode != 0
    (case,) = report_cases(report)
    assert case["result"] == "fail" and "-S tool_dir=/nonexistent/osu: no such directory" in case["fail_reason"]


# -- names ------------------------------------------------------------------------------------

def readme_name_filters():
    """Every ``-n PATTERN`` example of the README and the user guide (docs/*.md, inline code),
    with the check class it names."""
    import re
    found = []
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for pattern in re.findall(r"`[^`]*?-n '?([^'`\s]+)'?[^`]*`", page.read_text()):
            found.append((pattern, re.match(r"\^?\(?([A-Za-z]+)", pattern).group(1)))
    return found


def test_readme_name_filters_select_exactly_the_named_check(tmp_path):
    filters = readme_name_filters()
    assert ("^PingPongCheck", "PingPongCheck") in filters
    config = fake_local(tmp_path, GPU_NO_CUPY)  # a GPU partition: every variant is listed
    for pattern, cls in filters:
        if cls.isupper():  # a placeholder (``-n CHECK``), not an example
            continue
        run = bare_reframe("-C", config, "-c", "checks/", "-l", "-n", pattern, "--prefix", tmp_path)
        listed = [ln.split()[1] for ln in run.stdout.splitlines() if ln.startswith("- ")]
        if cls == "NoSuchCheck":  # the README's example of a filter that matches nothing
            assert listed == [], (pattern, listed)
            continue
        assert listed and set(listed) == {cls}, (pattern, listed)


def test_description_and_maintainers_say_what_runs(tmp_path):
    report = tmp_path / "report.json"
    run = reframe("-c", "checks/internode.py", "-c", "checks/pingpong.py", "--dry-run",
                  "-n", "MultiPingPongCheck%method=host%pairs=all|^PingPongCheck%method=host",
                  "-S", "emulate_nodes=y", "--prefix", tmp_path, "--report-file", report,
                  env=clean_env(**ROOT_OK))
    assert run.returncode == 0, run.stdout[-2000:]
    cases = {c["display_name"].split(" %")[0]: c for c in report_cases(report)}
    multi = cases["MultiPingPongCheck"]
    assert multi["num_tasks"] == 4
    assert multi["descr"].startswith("multi-pingpong with host (4 ranks: 2 nodes x 2, emulated on one node)")
    assert cases["PingPongCheck"]["descr"].startswith("pingpong with host (2 ranks)")
    from gpucomm.rfm.base import contact
    assert "@" in contact() and cases["PingPongCheck"]["maintainers"] == [contact()]


def test_a_named_check_that_runs_on_no_partition_says_so(tmp_path):
    """Old: `reframe -c checks/ -n NodeStateCheck -r` (or NicPathCheck) on a CPU node: "PASSED
    0/0", exit 0, not a word of why.  Now one warning per named check, naming what its partition
    lacks; a check named and run (PingPongCheck's host variant) and one not named say nothing."""
    run = reframe("-c", "checks/", "-n", "NodeStateCheck", "-n", "NicPathCheck", "-n", "^PingPongCheck", "-l",
                  "--prefix", tmp_path)
    assert run.returncode == 0, run.stdout[-3000:]
    said = [ln for ln in run.stdout.splitlines() if "runs on no partition" in ln]
    assert len(said) == 2, run.stdout[-3000:]
    for name in ("NodeStateCheck", "NicPathCheck"):
        assert any(f"names {name}, which runs on no partition of this system (it needs +gpucomm +gpu: "
                   "local:cpu lacks +gpu): no test case of it runs" in ln for ln in said), said
    quiet = reframe("-c", "checks/", "-l", "--prefix", tmp_path)
    assert "runs on no partition" not in quiet.stdout
