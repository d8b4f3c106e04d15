"""What a check is asked for is done or fails (dry runs of the host ping-pong): a soak at sizes
the check does not sweep fails in setup naming them (a mode's soak, soak_where_swept, runs
without it); a check without a time limit still gives the payload's watchdog a ceiling; a
--prefix with a space, which ReFrame's job launch would split, fails every check at setup."""

from gpucomm.constants import PAYLOAD_TIMEOUT_CEILING_S
from reframe_helpers import clean_env, dry_runs, job_script, reframe, report_cases

PINGPONG = ("-c", "checks/pingpong.py", "-n", "^PingPongCheck%method=host", "-S", "sizes=8")
SOAK_AT_16 = ("-S", "validate_every=1", "-S", "validate_sizes=16")


def test_a_soak_at_sizes_not_swept_fails_naming_them(tmp_path):
    report = tmp_path / "report.json"
    run = reframe(*PINGPONG, *SOAK_AT_16, "--dry-run", "--prefix", tmp_path, "--report-file", report)
    assert run.returncode != 0, run.stdout[-2000:]
    (case,) = report_cases(report)
    assert case["result"] == "fail" and case["fail_phase"] == "setup", case["fail_reason"]
    assert ("-S validate_sizes=16: this check sweeps none of them (sizes=8): the soak asked for would "
            "check nothing") in case["fail_reason"]


def test_a_modes_soak_and_no_time_limit(tmp_path_factory):
    cases = dry_runs({"mode-soak": (*PINGPONG, *SOAK_AT_16, "-S", "soak_where_swept=y", "-S", "time_limit=0")},
                     tmp_path_factory, clean_env())
    (case,) = cases["mode-soak"]
    script = job_script(case)
    assert "--validate-every" not in script  # the mode's sizes, none of them this check's
    assert f"--timeout {PAYLOAD_TIMEOUT_CEILING_S}" in script  # old: no --timeout, a hang lived on


def test_a_prefix_with_a_space_fails_at_setup_naming_it(tmp_path):
    """Old: the job launch failed with "No such file or directory: '.../a'"."""
    prefix = tmp_path / "a b"
    report = tmp_path / "report.json"
    run = reframe(*PINGPONG, "--dry-run", "--prefix", prefix, "--report-file", report)
    assert run.returncode != 0, run.stdout[-2000:]
    (case,) = report_cases(report)
    assert case["result"] == "fail" and case["fail_phase"] == "setup", case["fail_reason"]
    assert f"the stage directory '{prefix}/stage' has white space in it" in case["fail_reason"]
