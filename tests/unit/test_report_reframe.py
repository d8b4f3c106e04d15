"""``gpucomm report`` of real ReFrame output made here on the CPU: two nights of the host ping-pong
(a ReFrame session each: outside the unit tier), their report files, perflogs and results files."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from gpucomm import constants
from test_report import PAPER_ROWS, REPO, csv, report, results

pytestmark = pytest.mark.reframe


def reframe(prefix, *extra):
    cmd = [sys.executable, "-c", "import sys; from reframe.frontend.cli import main; sys.exit(main())",
           "-C", str(REPO / "config" / "settings.py"), "-c", str(REPO / "checks" / "pingpong.py"),
           "-n", "PingPongCheck", "-r", "--prefix", str(prefix), "-S", "sizes=8,1M", "-S", "iters=20", *extra]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               RFM_SAVE_LOG_FILES="n", RFM_ENABLE_RESULTS_STORAGE="n")
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    # a failed reference check still leaves everything the report reads; a crash does not
    assert "PingPongCheck" in proc.stdout and (prefix / "perflogs").is_dir(), proc.stdout[-3000:] + proc.stderr[-3000:]


@pytest.fixture(scope="module")
def cpu_runs(tmp_path_factory):
    """Two nights of the host ping-pong on this machine: report files and perflogs of both."""
    prefix = tmp_path_factory.mktemp("rfm")
    reframe(prefix, "--report-file", prefix / "reports" / "night1.json")
    reframe(prefix, "--report-file", prefix / "reports" / "night2.json")
    return prefix


def test_cpu_reframe_run(cpu_runs, tmp_path, capsys):
    paper_csv = tmp_path / "paper.csv"
    paper_csv.write_text(PAPER_ROWS)
    out = tmp_path / "rep"
    code, stdout, err = report([cpu_runs, "-o", out, "--paper", paper_csv], capsys)
    assert code == 0, err
    assert "[1/" in err  # per-file progress
    night1, night2 = (results(cpu_runs / "reports" / f"night{i}.json") for i in (1, 2))
    case2 = night2["runs"][0]["testcases"][0]
    case1 = night1["runs"][0]["testcases"][0]
    system, part = case2["system"], case2["partition"]

    # per-size table: the numbers of the gpucomm_results.json in the output folder (the last night's)
    sweep = results(Path(case2["outputdir"]) / "gpucomm_results.json")
    sweeps = csv(out, "sweeps.csv")
    assert len(sweeps) == 2 and set(sweeps["size"]) == {8, 1 << 20}
    for rec in sweep["results"]:
        row = sweeps[sweeps["size"] == rec["size"]].iloc[0]
        assert (row["system"], row["partition"], row["method"], row["op"]) == (system, part, "host", "pingpong")
        assert row["goodput_GBps"] == pytest.approx(rec["goodput_GBps"])
        assert row["time_us"] == pytest.approx(rec["time_us"]["median"])

    # nightly: night 2 against night 1 (report and perflog lines of one run are counted once)
    nightly = csv(out, "trend.csv").set_index("var")
    assert set(nightly.index) == {"latency_8B", "goodput_1MiB"}
    for var in nightly.index:
        value2 = case2["perfvalues"][f"{system}:{part}:{var}"][0]
        value1 = case1["perfvalues"][f"{system}:{part}:{var}"][0]
        assert nightly.loc[var, "value"] == pytest.approx(value2)
        assert nightly.loc[var, "baseline"] == pytest.approx(value1)
        assert nightly.loc[var, "runs"] == 1
        assert nightly.loc[var, "change"] == pytest.approx(value2 / value1 - 1)
    node = case2["job_nodelist"][0]
    assert f"  {node}  {system}:{part}  1 test cases" in stdout
    assert (out / "health.txt").read_text() == stdout
    assert (out / f"goodput_{system}_{part}_pingpong.png").stat().st_size > 10000
    page = (out / "index.html").read_text()
    assert page.count("data:image/png;base64,") == 2 and "data:text/csv;base64," in page


def test_cpu_perflogs_only(cpu_runs, tmp_path, capsys):
    """The perflog alone gives the same nightly comparison (newest line vs older ones)."""
    out = tmp_path / "rep"
    code, stdout, err = report([cpu_runs / "perflogs", "-o", out, "--paper", "none", "-q"], capsys)
    assert code == 0, err
    log = next((cpu_runs / "perflogs").rglob("*.log"))
    lines = pd.read_csv(log, sep="|")
    nightly = csv(out, "trend.csv")
    assert len(nightly) == 2 and (nightly["runs"] == 1).all()
    row = nightly.set_index("var").loc["goodput_1MiB"]
    gp = lines[lines["perf_var"] == "goodput_1MiB"]["perf_value"]  # one line per perf variable
    assert row["value"] == pytest.approx(gp.iloc[-1])
    assert row["baseline"] == pytest.approx(gp.iloc[0])
    assert "[1/" not in err  # -q


def test_cpu_broken_results_json_falls_back_to_stdout(cpu_runs, tmp_path, capsys):
    outdir = next((cpu_runs / "output").rglob("gpucomm_results.json")).parent
    copy_dir = tmp_path / "output" / "local" / "cpu" / "default" / outdir.name
    shutil.copytree(outdir, copy_dir)
    good = results(copy_dir / "gpucomm_results.json")
    text = (copy_dir / "gpucomm_results.json").read_text()
    (copy_dir / "gpucomm_results.json").write_text(text[: len(text) // 2])
    code, _, err = report([tmp_path / "output", "-o", tmp_path / "rep", "--paper", "none"], capsys)
    assert code == constants.EXIT_REPORT_NO_VERDICT  # results files only: plots, no ReFrame verdict
    assert "truncated or invalid JSON" in err and "rfm_job.out instead" in err
    sweeps = csv(tmp_path / "rep", "sweeps.csv")
    assert sorted(sweeps["goodput_GBps"]) == pytest.approx(sorted(r["goodput_GBps"] for r in good["results"]))
