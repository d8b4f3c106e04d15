"""A launch that fails before the payload speaks (mpirun or srun refusing, an interpreter that
cannot import gpucomm, a missing module) puts the first meaningful lines of the job's stderr in
the check's failure reason, not only "no GPUCOMM-DONE line" (issue 18)."""

import pytest
import reframe.utility.sanity as sn
from reframe.core.exceptions import SanityError

from gpucomm.rfm.sanity import payload_ok, stderr_excerpt, sweep_ok
from reframe_helpers import clean_env, reframe, report_cases

ROOT_OK = dict(OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)

OPENMPI_SLOTS = """--------------------------------------------------------------------------
There are not enough slots available in the system to satisfy the 4
slots that were requested by the application:

  python3

Either request fewer procs for your application, or make more slots
--------------------------------------------------------------------------
"""

TRACEBACK = """Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "/v/lib/gpucomm/payload/cli.py", line 12, in <module>
    import mpi4py
ModuleNotFoundError: No module named 'mpi4py'
Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
ModuleNotFoundError: No module named 'mpi4py'

srun: error: nid001: task 1: Exited with exit code 1
"""


def test_excerpt_skips_rules_blank_lines_and_traceback_frames(tmp_path):
    err = tmp_path / "rfm_job.err"
    err.write_text(OPENMPI_SLOTS)
    assert stderr_excerpt(err) == ("There are not enough slots available in the system to satisfy "
                                   "the 4 slots that were requested by the application: python3")
    err.write_text(TRACEBACK)  # two ranks, the same error: said once
    assert stderr_excerpt(err) == ("ModuleNotFoundError: No module named 'mpi4py' "
                                   "srun: error: nid001: task 1: Exited with exit code 1")
    err.write_text("\n\n")
    assert stderr_excerpt(err) == ""
    err.write_text("x" * 1000)
    assert len(stderr_excerpt(err)) == 400


def test_sanity_of_a_failed_launch_quotes_the_jobs_stderr(tmp_path):
    out, err = tmp_path / "rfm_job.out", tmp_path / "rfm_job.err"
    out.write_text("")
    err.write_text(OPENMPI_SLOTS)
    with pytest.raises(SanityError, match="payload did not finish: no GPUCOMM-DONE line; rfm_job.err "
                                          "says: There are not enough slots available"):
        sn.evaluate(payload_ok(str(out), str(err), [8]))
    err.write_text(TRACEBACK)
    with pytest.raises(SanityError, match=r"\(0 of 1 launches\): .*No module named 'mpi4py'"):
        sn.evaluate(sweep_ok(str(out), str(err), ["host"], [8]))
    err.write_text("")
    with pytest.raises(SanityError, match="nothing in rfm_job.err"):
        sn.evaluate(payload_ok(str(out), str(err), [8]))


def test_wrong_interpreter_without_preflight_fails_with_its_error(tmp_path):
    report = tmp_path / "report.json"
    run = reframe("-c", "checks/pingpong.py", "-n", "^PingPongCheck%method=host", "-r",
                  "-S", "python=/usr/bin/python3", "-S", "preflight=n", "-S", "sizes=8",
                  "--prefix", tmp_path, "--report-file", report, env=clean_env(**ROOT_OK))
    assert run.returncode != 0
    (case,) = report_cases(report)
    assert "GPUCOMM-PREFLIGHT" not in case["fail_reason"]  # -S preflight=n is honoured
    assert "No module named gpucomm" in case["fail_reason"], case["fail_reason"]


def test_mpirun_refusing_the_emulated_multi_pingpong_names_why(tmp_path):
    """On 2 cores, the emulated multi ping-pong's 4 ranks exceed mpirun's slots."""
    import os
    if (os.cpu_count() or 0) >= 4:
        pytest.skip("this machine has slots for 4 ranks")
    report = tmp_path / "report.json"
    run = reframe("-c", "checks/internode.py", "-n", "^MultiPingPongCheck%method=host%pairs=all", "-r",
                  "-S", "emulate_nodes=y", "-S", "sizes=8", "--prefix", tmp_path,
                  "--report-file", report, env=clean_env(**ROOT_OK))
    assert run.returncode != 0
    (case,) = report_cases(report)
    assert "not enough slots" in case["fail_reason"], case["fail_reason"]
