"""The soak through ReFrame (-S validate_every, rfm.base): on this CPU machine, the host
ping-pong with a one-in-7 corruption (GPUCOMM_TEST_CORRUPT_EVERY) passes without the soak and
fails with it, the reason naming rank, size and iteration."""

import json
import os

import pytest

from reframe_helpers import clean_env, job_script, reframe, report_cases

ROOT_OK = dict(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
ONE_IN_7 = dict(GPUCOMM_TEST_CORRUPT="1:8", GPUCOMM_TEST_CORRUPT_EVERY="7")


@pytest.mark.parametrize("soak", [False, True])
def test_soak_catches_what_one_check_per_size_misses(tmp_path, soak):
    report = tmp_path / "report.json"
    more = ["-S", "validate_every=7", "-S", "validate_sizes=8,16M"] if soak else []
    run = reframe("-c", "checks/pingpong.py", "-n", "^PingPongCheck%method=host", "-r",
                  "-S", "sizes=8,4K", "-S", "iters=20", "-S", "batch=1", *more,
                  "--prefix", tmp_path, "--report-file", report, env=clean_env(**ROOT_OK, **ONE_IN_7))
    (case,) = report_cases(report)
    script = job_script(case) or open(os.path.join(case["outputdir"], "rfm_job.sh")).read()
    if not soak:
        assert run.returncode == 0 and case["result"] == "pass", case["fail_reason"]
        assert "--validate-every" not in script
        return
    # 16M is not swept by this check: the soak applies to the sizes it sweeps
    assert "--validate-every 7 --validate-sizes 8 " in script
    assert run.returncode != 0 and case["result"] == "fail" and case["fail_phase"] == "sanity"
    assert ("rank 1: data received from rank 0 is wrong at size 8 B" in case["fail_reason"] and
            "in timed iteration 7 of 20: 2 of 2 checked samples wrong" in case["fail_reason"]), \
        case["fail_reason"]
    kept = json.load(open(os.path.join(case["stagedir"], "gpucomm_results.json")))  # a failure stays staged
    assert [(r["size"], r["wrong"]) for r in kept["results"]] == [(8, 2)]
