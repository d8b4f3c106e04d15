"""``gpucomm report`` of a batch of nodes (fleetsim's synthetic session): the page stays one a
person reads, per-node detail only where there is a finding, every value in the CSVs beside it."""

import json
import time

import pandas as pd

import sessions
from gpucomm import constants
from gpucomm.analysis.report import main, render, tables

NODES = 256
#: the page of 256 nodes x 2 repeats (15,360 perf values) stays below this; before the page was
#: folded it held every value twice (a table row and the embedded trend.csv): about 17 MB
PAGE_MAX = 400_000
FAILED_NODE, OUTSIDE_NODE, QUIET_NODE = "nid00002", "nid00005", "nid00123"


def batch(path, nodes=NODES):
    """A 256-node, 2-repeat session: one test case of FAILED_NODE failed in sanity, one perf value
    of OUTSIDE_NODE outside its ReFrame reference."""
    sessions.fleet(path, nodes, 2, seed=3)
    doc = json.loads(path.read_text())
    cases = doc["runs"][0]["testcases"]
    failed = next(tc for tc in cases if tc["job_nodelist"] == [FAILED_NODE])
    failed.update(result="fail", fail_phase="sanity", fail_reason="injected for the test")
    outside = next(tc for tc in cases if tc["job_nodelist"] == [OUTSIDE_NODE])
    var = next(iter(outside["perfvalues"]))
    outside["perfvalues"][var] = [50.0, 100.0, -0.1, None, "GB/s", "fail"]
    outside.update(result="fail", fail_phase="performance", fail_reason="outside its reference")
    path.write_text(json.dumps(doc))
    return len(cases)


def test_a_batch_of_nodes_makes_a_page_a_person_reads(tmp_path, capsys):
    n_cases = batch(tmp_path / "s.json")
    t0 = time.monotonic()
    code = main([str(tmp_path / "s.json"), "-o", str(tmp_path / "r"), "-q"])
    seconds = time.monotonic() - t0
    out, _ = capsys.readouterr()
    assert code == constants.EXIT_REPORT_FAIL
    page = (tmp_path / "r" / "index.html").read_text()
    assert len(page) < PAGE_MAX, len(page)
    assert seconds < 30  # about 3 s here; 1,024 nodes x 5 repeats: bench/results/.../53-report-at-scale
    # per-node detail only where there is a finding: both nodes' rows, a quiet node's none
    assert FAILED_NODE in page and OUTSIDE_NODE in page and QUIET_NODE not in page
    assert "injected for the test" in page and "outside its ReFrame reference" in page
    assert 'id="trend-summary"' in page and 'id="trend-flagged"' in page
    # the health text: every node in health.txt (and stdout), the page's copy folded
    assert all(f"nid{i:05d}" in out for i in range(NODES))
    assert f"PASS  {NODES - 2} nodes (nid00000 ... nid00255)  syn:part" in page
    # every perf value of every node in trend.csv beside the page, linked, not embedded
    nightly = pd.read_csv(tmp_path / "r" / "trend.csv")
    assert len(nightly) == n_cases * 10 and nightly["nodes"].nunique() == NODES
    assert '<a href="trend.csv">trend.csv</a>' in page


def test_a_few_nodes_keep_every_row_and_every_line():
    """Below the thresholds nothing is folded: the trend table has a row per value and the
    health text every line."""
    text = "gpucomm health: PASS (x)\n" + "".join(f"PASS  n{i}  s:p  3 test cases\n" for i in range(5))
    assert render.health_folded(text) == text
    long = "gpucomm health: PASS (x)\n" + "".join(f"PASS  n{i:03d}  s:p  3 test cases\n" for i in range(100)) \
        + "FAIL  n100  s:p  3 test cases, 1 problems\n      T [e]: fail in sanity\n"
    assert render.health_folded(long).splitlines() == [
        "gpucomm health: PASS (x)", "PASS  100 nodes (n000 ... n099)  s:p  3 test cases each",
        "FAIL  n100  s:p  3 test cases, 1 problems", "      T [e]: fail in sanity"]
    assert tables.TREND_ROWS_MAX >= 100


def test_one_session_a_node_says_what_the_drift_says(tmp_path):
    """Without an earlier night of any node the drift skips the judging (drift.first_nights), not
    its words: the same lines and statuses as judging every variable, nothing failed, no plot,
    no drift.csv."""
    from gpucomm.analysis import drift, inputs
    from gpucomm.analysis.report import drift_page
    batch(tmp_path / "s.json", nodes=12)
    _, cases, perf = inputs.load([str(tmp_path / "s.json")]).frames()
    fast = drift_page.report_part(perf, cases, str(tmp_path), None, drift.NIGHT_GAP_H)
    df, notes = drift.measurements(perf, cases, None, drift.NIGHT_GAP_H)
    full = drift.judge_measurements(df, notes)
    assert not fast[2].judged and full.judged
    assert fast[0] == drift_page.lines(full) and fast[1] == []
    assert fast[2].failed.empty and fast[2].suspects.empty
    assert sorted(fast[2].latest["status"]) == sorted(full.latest[full.latest["test"] != drift.SCORE_TEST]["status"])
    assert not (tmp_path / "drift.csv").exists()


def test_each_perf_row_is_its_test_case_with_its_own_value(tmp_path):
    """The perf frame is built column-wise (a week of 1,024-node nights: 1.2 million rows): each
    row still carries its own test case's columns and its own value, unit and reference result,
    and reading the frames twice gives them again."""
    from gpucomm.analysis import inputs
    batch(tmp_path / "s.json", nodes=6)
    doc = json.loads((tmp_path / "s.json").read_text())
    data = inputs.load([str(tmp_path / "s.json")])
    _, cases, perf = data.frames()
    _, cases2, perf2 = data.frames()
    pd.testing.assert_frame_equal(perf, perf2)
    pd.testing.assert_frame_equal(cases, cases2)
    want = sorted((tc["job_nodelist"][0], tc["display_name"].split()[0], tc["result"], key.rsplit(":", 1)[-1],
                   val[0], val[4], val[5]) for tc in doc["runs"][0]["testcases"]
                  for key, val in tc["perfvalues"].items())
    got = sorted(zip(perf["node"], perf["test"].str.split().str[0], perf["result"], perf["var"], perf["value"],
                     perf["unit"], perf["var_result"]))
    assert got == want and len(set(perf["node"])) == 6
