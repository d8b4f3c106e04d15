"""The cron entry point (gpucomm nightly) ends in the report's verdict, and -S input that ReFrame
only warns about or answers with a traceback is a failure or one line: a typo'd name fails the
checks naming it, a value of the wrong type is one line and exit 2, a size list with a space is
one word of the job script."""

import subprocess
import sys

import pytest

from gpucomm import constants
from reframe_helpers import REPO, clean_env, dry_runs, job_script, reframe

ROOT_OK = dict(OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)


def nightly(tmp_path, *args):
    run = subprocess.run([sys.executable, "-m", "gpucomm", "nightly", "--out", str(tmp_path / "night"), *args],
                         cwd=REPO, env=clean_env(**ROOT_OK), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, timeout=600)
    assert "Traceback" not in run.stdout, run.stdout[-3000:]
    return run


def test_nothing_selected_is_nothing_ran(tmp_path):
    run = nightly(tmp_path, "-n", "NoSuchCheck")
    assert run.returncode == constants.EXIT_REPORT_NOTHING_RAN, run.stdout[-2000:]
    assert "NOTHING RAN" in run.stdout


def test_a_clean_night_passes_and_a_typo_fails_naming_it(tmp_path):
    run = nightly(tmp_path / "a", "-n", "^HealthCheck", "-S", "sizes=8")
    assert run.returncode == constants.EXIT_OK, run.stdout[-3000:]
    assert "gpucomm health: PASS" in run.stdout
    run = nightly(tmp_path / "b", "-n", "^HealthCheck", "-S", "sizes=8", "-S", "sizez=8")
    assert run.returncode == constants.EXIT_REPORT_FAIL, run.stdout[-3000:]
    assert "-S sizez: no check has such a variable" in run.stdout


def test_a_night_folder_that_cannot_be_made_is_exit_2(tmp_path):
    (tmp_path / "file").write_text("")
    run = nightly(tmp_path / "file", "-n", "NoSuchCheck")
    assert run.returncode == constants.EXIT_BAD_INPUT and "gpucomm nightly: error" in run.stdout


@pytest.mark.parametrize("setting", ["iters=abc", "emulate_nodes=maybe", "budget=soon"])
def test_a_value_of_the_wrong_type_is_one_line_exit_2(setting):
    run = reframe("-c", "checks/pingpong.py", "-l", "-S", setting)
    assert run.returncode == constants.EXIT_BAD_INPUT, run.stdout[-2000:]
    assert "Traceback" not in run.stdout
    (line,) = [ln for ln in run.stdout.splitlines() if "gpucomm: error" in ln]
    assert setting.split("=")[0] in line


def test_sizes_with_a_space_are_one_word_of_the_job_script(tmp_path_factory):
    cases = dry_runs({"spaced": ("-c", "checks/pingpong.py", "-n", "^PingPongCheck%method=host",
                                 "-S", "sizes=8, 1K")}, tmp_path_factory, clean_env())
    (case,) = cases["spaced"]
    assert "--sizes '8, 1K'" in job_script(case)
