"""The autodetected local system end to end on this (CPU) machine: the host-MPI checks run under
ReFrame and pass, every size validated; GPU variants are not generated without a GPU; the job
script is what the local partition promises."""

import json
import os

from reframe_helpers import (
    BW_CHECKS,
    DATAPATH_CHECKS,
    HEALTH_CHECKS,
    INTERNODE_CHECKS,
    NATIVE_CHECKS,
    PAIR_MATRIX_CHECKS,
    assert_precision,
    clean_env,
    job_script,
    reframe,
    report_cases,
)


def test_local_host_checks_pass(tmp_path):
    report = tmp_path / "report.json"
    run = reframe("-c", "checks/", "-x", "|".join(INTERNODE_CHECKS + NATIVE_CHECKS + PAIR_MATRIX_CHECKS +
                                                  HEALTH_CHECKS + BW_CHECKS + DATAPATH_CHECKS), "-r",
                  "-S", "sizes=8,4K,1M", "-S", "iters=20",
                  "--prefix", tmp_path, "--report-file", report,
                  env=clean_env(OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1))
    assert run.returncode == 0, run.stdout[-4000:]
    cases = report_cases(report)
    names = sorted(c["display_name"].split(" /")[0] for c in cases)
    assert names == ["AllReduceCheck %method=host", "AllToAllCheck %method=host",
                     "PingPongCheck %method=host"]
    for case in cases:
        assert case["result"] == "pass", case["fail_reason"]
        assert case["system"] == "local"
        perf = case["perfvalues"]
        # 8 B latency and 1 MiB goodput were swept: their perf variables exist and are positive
        lat = [v for k, v in perf.items() if k.endswith(":latency_8B")]
        gp = [v for k, v in perf.items() if k.endswith(":goodput_1MiB")]
        assert len(lat) == 1 and lat[0][0] > 0 and lat[0][4] == "us"
        assert len(gp) == 1 and gp[0][0] > 0 and gp[0][4] == "GB/s"
        assert not any(k.endswith(":goodput_1GiB") for k in perf)  # not swept, not reported
        assert_precision(case)  # each perf variable's precision, in its unit, in the report
        kept = json.load(open(os.path.join(case["outputdir"], "gpucomm_results.json")))
        assert [r["size"] for r in kept["results"]] == [8, 4096, 1 << 20]
        assert all(r["validated"] for r in kept["results"])
        script = job_script(case) or open(os.path.join(case["outputdir"], "rfm_job.sh")).read()
        ranks = 2
        assert f"mpirun -np {ranks} " in script
        assert "-m gpucomm" in script and "--sizes 8,4K,1M" in script and "--iters 20" in script


def test_failing_payload_fails_the_check_with_its_reason(tmp_path):
    """A corrupted element (test hook) must turn into a sanity FAIL naming size and rank."""
    report = tmp_path / "report.json"
    env = clean_env(OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1,
                    GPUCOMM_TEST_CORRUPT="1:4096")
    run = reframe("-c", "checks/pingpong.py", "-r", "-S", "sizes=8,4K", "-S", "iters=10",
                  "--prefix", tmp_path, "--report-file", report, env=env)
    assert run.returncode != 0
    (case,) = report_cases(report)
    assert case["result"] == "fail" and case["fail_phase"] == "sanity"
    assert "size 4096 B" in case["fail_reason"] and "rank 1" in case["fail_reason"]


def test_killed_rank_fails_the_check(tmp_path):
    """A rank that dies mid-run: the job ends and the check FAILs saying the payload did not
    finish (never a hang, never a PASS)."""
    report = tmp_path / "report.json"
    env = clean_env(OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1,
                    GPUCOMM_TEST_HANG="1:4096", GPUCOMM_TEST_HANG_EXIT="1")
    run = reframe("-c", "checks/pingpong.py", "-n", "^PingPongCheck", "-r", "-S", "sizes=8,4K",
                  "-S", "iters=10", "--prefix", tmp_path, "--report-file", report, env=env, timeout=300)
    assert run.returncode != 0
    (case,) = report_cases(report)
    assert case["result"] == "fail" and "payload did not finish" in case["fail_reason"]


BIG_SWEEP = '''
import reframe as rfm

from gpucomm.rfm import GpucommCheck


@rfm.simple_test
class BigSweepCheck(GpucommCheck):
    op = "alltoall"
    method = "host"
    sizes = "8,1M,1T"
    iters = 10
'''


def _big_sweep(tmp_path, *args):
    check = tmp_path / "big_sweep.py"
    check.write_text(BIG_SWEEP)
    report = tmp_path / "report.json"
    run = reframe("-c", check, "-r", *args, "--prefix", tmp_path / "out", "--report-file", report,
                  env=clean_env(OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1))
    (case,) = report_cases(report)
    return run, case


def test_a_default_sweep_stops_where_memory_ends(tmp_path):
    """A check's own sweep (no -S sizes) that the rank's memory share cannot hold to its end
    stops at the largest size that fits and PASSES, naming the sizes left out (the README's
    main job on a 23 GB machine failed AllToAllCheck at 1 GiB: a size nobody chose)."""
    run, case = _big_sweep(tmp_path)
    assert run.returncode == 0, run.stdout[-4000:]
    assert case["result"] == "pass", case["fail_reason"]
    perf = case["perfvalues"]
    assert any(k.endswith(":latency_8B") for k in perf) and any(k.endswith(":goodput_1MiB") for k in perf)
    kept = json.load(open(os.path.join(case["outputdir"], "gpucomm_results.json")))
    assert [r["size"] for r in kept["results"]] == [8, 1 << 20]
    assert {r["capped_at"] for r in kept["results"]} == {1 << 20}
    assert "the default sweep stops at 1MiB" in kept["meta"]["sizes_capped"]
    out = open(os.path.join(case["outputdir"], "rfm_job.out")).read()
    assert "# host: the default sweep stops at 1MiB: 1024GiB needs" in out


def test_sizes_given_with_S_must_fit(tmp_path):
    """-S CHECK.sizes=...: the user's choice; a size that cannot fit stays a FAIL saying so."""
    run, case = _big_sweep(tmp_path, "-S", "BigSweepCheck.sizes=8,1T")
    assert run.returncode != 0
    assert case["result"] == "fail" and case["fail_phase"] == "sanity"
    assert "--sizes up to 1099511627776 B needs" in case["fail_reason"]
    assert "choose smaller sizes" in case["fail_reason"]
