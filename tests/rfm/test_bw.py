"""The bw check (checks/bw.py) on this CPU machine: the host method runs under ReFrame with a window
of 8, every size validated, its perf variables per size (msgtime_8B in us, goodput in GB/s) held
to the references of the partition ($ref file); the GPU methods are not generated without a GPU."""

import json
import os

import yaml

from reframe_helpers import clean_env, job_script, reframe, report_cases

ENV = dict(OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)


def _run(tmp_path, *args, **env):
    report = tmp_path / "report.json"
    run = reframe("-c", "checks/bw.py", "-r", "-S", "sizes=8,4K,1M", "-S", "iters=20", *args,
                  "--prefix", tmp_path / "out", "--report-file", report, env=clean_env(**ENV, **env))
    return run, report_cases(report)


def test_bw_check_runs_with_host_and_validates(tmp_path):
    run, cases = _run(tmp_path)
    assert run.returncode == 0, run.stdout[-4000:]
    (case,) = cases
    assert case["display_name"].split(" /")[0] == "BwCheck %method=host"
    assert case["result"] == "pass", case["fail_reason"]
    perf = case["perfvalues"]
    (msgtime,) = [v for k, v in perf.items() if k.endswith(":msgtime_8B")]
    assert msgtime[0] > 0 and msgtime[4] == "us"
    assert not any(k.endswith(":goodput_64MiB") for k in perf)  # not swept, not reported
    kept = json.load(open(os.path.join(case["outputdir"], "gpucomm_results.json")))
    assert kept["meta"]["op"] == "bw" and kept["meta"]["window"] == 8
    assert [r["size"] for r in kept["results"]] == [8, 4096, 1 << 20]
    assert all(r["validated"] and r["timed_loop"] in ("numba-mpi", "mpi4py") for r in kept["results"])
    script = job_script(case) or open(os.path.join(case["outputdir"], "rfm_job.sh")).read()
    assert "-m gpucomm bw --method host" in script and "--window 8" in script


def _refs(tmp_path, msgtime):
    refs = tmp_path / "refs"
    refs.mkdir()
    (refs / "local.yaml").write_text(yaml.safe_dump({"BwCheck": {
        "$index": ["$partition", "method"],
        "local:cpu": {"host": {"msgtime_8B": msgtime}}}}))
    return refs


def test_bw_check_held_to_its_reference(tmp_path):
    """A reference the host's 8 B message time cannot meet fails the check in performance; one
    it meets passes; -S window and -S loop reach the payload."""
    refs = _refs(tmp_path, [1e-4, None, 0.1, "us"])
    run, (case,) = _run(tmp_path, "-S", "window=4", "-S", "loop=mpi4py", GPUCOMM_REFERENCE_DIR=refs)
    assert run.returncode != 0
    assert case["result"] == "fail" and case["fail_phase"] == "performance", case["fail_reason"]
    assert "msgtime_8B" in case["fail_reason"]
    kept = json.load(open(os.path.join(case["stagedir"], "gpucomm_results.json")))  # a failure keeps it
    assert kept["meta"]["window"] == 4 and kept["meta"]["timed_loop"] == "mpi4py"


def test_bw_check_passes_a_reference_it_meets(tmp_path):
    refs = _refs(tmp_path, [1000.0, None, 0.5, "us"])
    run, (case,) = _run(tmp_path, GPUCOMM_REFERENCE_DIR=refs)
    assert run.returncode == 0, run.stdout[-4000:]
    assert case["result"] == "pass" and "no reference" not in case["descr"]
    (msgtime,) = [v for k, v in case["perfvalues"].items() if k.endswith(":msgtime_8B")]
    assert msgtime[1:4] == [1000.0, None, 0.5]  # the reference, as the $ref file gives it


def test_bad_window_and_loop_are_one_line_errors(tmp_path):
    for var, text in (("window=-1", "-S window=-1: must be >= 0"), ("loop=fast", "-S loop=fast: choose")):
        run = reframe("-c", "checks/bw.py", "-r", "-S", var, "--prefix", tmp_path / var,
                      env=clean_env(**ENV))
        assert run.returncode != 0 and text in run.stdout, run.stdout[-2000:]


SWEEP = '''
import reframe as rfm
from reframe.core.builtins import parameter

from gpucomm.rfm import SweepCheck


@rfm.simple_test
class BwSweepCheck(SweepCheck):
    operation = parameter(["bw"])
'''


def test_the_health_sweep_can_run_bw_on_a_pair(tmp_path):
    """bw is not in checks/health.py's sweep (the 60 s budget, see its docstring), but the sweep
    runs it, on a pair of ranks with the bw check's window, once added."""
    check = tmp_path / "bw_sweep.py"
    check.write_text(SWEEP)
    report = tmp_path / "report.json"
    run = reframe("-c", check, "-r", "--prefix", tmp_path / "out", "--report-file", report,
                  env=clean_env(**ENV))
    assert run.returncode == 0, run.stdout[-4000:]
    (case,) = report_cases(report)
    assert case["result"] == "pass", case["fail_reason"]
    script = job_script(case) or open(os.path.join(case["outputdir"], "rfm_job.sh")).read()
    assert "mpirun -np 2 " in script and "-m gpucomm bw --method host" in script and "--window 8" in script
    assert any(k.endswith(":host_latency_8B") for k in case["perfvalues"])
