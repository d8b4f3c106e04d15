"""A fault hook set where it cannot fire, or whose effect nothing can judge, fails the check
naming it: never "TEST HOOK ACTIVE" and a PASS that tested nothing."""

import pytest

from gpucomm import constants
from gpucomm.rfm.hooks import hook_error
from reframe_helpers import clean_env, reframe, report_cases

ROOT_OK = dict(OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)


def test_every_hook_declares_where_it_fires():
    from gpucomm.payload import faults
    hooks = {v for k, v in vars(faults).items() if isinstance(v, str) and v.startswith("GPUCOMM_TEST_")}
    assert hooks == set(constants.TEST_HOOK_SCOPE)


@pytest.mark.parametrize("hook, value, methods, op", [
    (constants.TEST_SLOW_PAIR, "0:1:0.01", [constants.HOST], constants.PINGPONG),
    (constants.TEST_IPC_REFUSED, "abc", [constants.HOST], constants.PINGPONG),
])
def test_a_hook_that_cannot_fire_is_an_error_naming_it(hook, value, methods, op):
    said = hook_error(methods, op, lambda: "", env={hook: value})
    assert said and hook in said


def test_a_numbers_only_hook_without_reference_is_an_error():
    env = {constants.TEST_SLOW_PAIR: "0:1:0.01"}
    said = hook_error([constants.HOST], constants.PAIR_MATRIX, lambda: "no reference for local:cpu yet", env=env)
    assert said and "nothing can fail" in said
    assert hook_error([constants.HOST], constants.PAIR_MATRIX, lambda: "", env=env) is None
    assert hook_error([constants.HOST], constants.PINGPONG, lambda: "", env={constants.TEST_HANG: "1:8"}) is None


def test_slow_pair_with_pingpong_fails_in_reframe(tmp_path):
    report = tmp_path / "report.json"
    run = reframe("-c", "checks/pingpong.py", "-n", "^PingPongCheck%method=host", "-r", "-S", "sizes=8",
                  "--prefix", tmp_path, "--report-file", report,
                  env=clean_env(**ROOT_OK, **{constants.TEST_SLOW_PAIR: "0:1:0.01"}))
    assert run.returncode != 0
    (case,) = report_cases(report)
    assert case["result"] == "fail" and constants.TEST_SLOW_PAIR in case["fail_reason"]
