"""The health mode on this CPU node: one sweep per operation, every method the partition offers
(host only here, the GPU methods left out with their reason), perf variables per method."""

import json
import os
import time

from reframe_helpers import assert_precision, clean_env, job_script, reframe, report_cases


def test_health_mode_sweeps_every_offered_method(tmp_path):
    report = tmp_path / "report.json"
    t0 = time.monotonic()
    run = reframe("-c", "checks/", "--mode", "health", "-r", "--prefix", tmp_path, "--report-file", report,
                  env=clean_env(OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1))
    wall = time.monotonic() - t0
    assert run.returncode == 0, run.stdout[-4000:]
    cases = report_cases(report)
    # the GPU data paths (checks/datapaths.py) skip on a CPU partition, saying why
    (gpu,) = [c for c in cases if c["name"].startswith("DataPathsCheck")]
    assert gpu["result"] == "skip" and "DataPathsCheck" in run.stdout and "lacks +gpu]" in run.stdout
    cases = [c for c in cases if c is not gpu]
    assert sorted(c["display_name"].split(" /")[0] for c in cases) == [
        "HealthCheck %operation=allreduce", "HealthCheck %operation=alltoall",
        "HealthCheck %operation=pingpong", "PairMatrixCheck %method=host"]
    assert all(c["result"] == "pass" for c in cases), [c["fail_reason"] for c in cases]
    for case in (c for c in cases if c["name"].startswith("HealthCheck")):
        assert case["result"] == "pass", case["fail_reason"]
        assert "left out: staging: partition local:cpu lacks +gpu" in case["descr"]
        assert "nvshmem: partition local:cpu lacks +gpu" in case["descr"]  # nvshmem is swept too
        perf = {k.split(":")[-1]: v for k, v in case["perfvalues"].items()}
        assert sorted(perf) == ["host_goodput_1MiB", "host_goodput_64MiB", "host_latency_8B"]
        assert_precision(case)
        script = job_script(case) or open(os.path.join(case["outputdir"], "rfm_job.sh")).read()
        assert "--method host " in script and "--budget 0.25" in script and "--sizes 8,1M,64M" in script
        kept = json.load(open(os.path.join(case["outputdir"], "gpucomm_results.json")))
        assert [r["size"] for r in kept["results"]] == [8, 1 << 20, 64 << 20]
    # the budget (--budget 0.25, asserted above) keeps the slow host sizes short; the time is
    # printed, never judged: this machine's speed is no reference
    print(f"health mode on the CPU node: {wall:.0f} s")


def test_sweep_rejects_unknown_methods(tmp_path):
    run = reframe("-c", "checks/health.py", "-r", "-S", "methods=host,warp", "--prefix", tmp_path,
                  env=clean_env(OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1))
    assert "unknown warp" in run.stdout


def test_a_sweep_method_stopped_by_memory_passes_its_sizes_up_to_the_cap(tmp_path):
    """The health sweep runs methods of different memories in one launch: a method whose
    default sweep the payload stopped (its records' capped_at) is validated up to its cap, the
    others to the end; without the cap the size missing is a failure, as before."""
    import pytest
    import reframe.utility.sanity as sn
    from reframe.core.exceptions import SanityError

    from gpucomm.contract import done_line, result_line
    from gpucomm.rfm.sanity import memory_cap, sweep_ok

    def rec(method, size, cap=None):
        return result_line({"op": "pingpong", "method": method, "size": size, "validated": True,
                            "time_us": {"median": 1.0}, **({"capped_at": cap} if cap else {})})
    sizes = [8, 1 << 20, 64 << 20]
    lines = [rec("host", s) for s in sizes] + [rec("staging", s, 1 << 20) for s in sizes[:2]]
    done = done_line({"ok": True, "method": "host,staging", "methods": {"host": "ok", "staging": "ok"}})
    out, err = tmp_path / "rfm_job.out", tmp_path / "rfm_job.err"
    out.write_text("\n".join(lines + [done]) + "\n")
    err.write_text("")
    assert sn.evaluate(sweep_ok(str(out), str(err), ["host", "staging"], sizes))
    assert memory_cap(str(out), "staging") == 1 << 20 and memory_cap(str(out), "host") is None
    out.write_text("\n".join(lines[:-2] + [rec("staging", 8), rec("staging", 1 << 20), done]) + "\n")
    with pytest.raises(SanityError, match="not validated: staging 64MiB"):
        sn.evaluate(sweep_ok(str(out), str(err), ["host", "staging"], sizes))
