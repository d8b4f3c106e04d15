"""A value's own precision in the verdicts: the session report's ``precision`` record of a test
case (contract.PRECISION_FIELD) read into the perf frame (analysis.inputs), a floor of a node's
variance in the fleet rule (statcore.own_variance, fleetrule.judge, gpucomm acceptance) and
tonight's own error in the nightly drift (drift.judge_series)."""

import csv
import json

import numpy as np
import pytest

import sessions
from gpucomm.analysis import drift, fleetrule, statcore as sc
from gpucomm.constants import EXIT_RETEST
from gpucomm.contract import PRECISION_FIELD

NODES = [f"nid{i:03d}" for i in range(1, 9)]
CHECK = "PingPongCheck %method=host"
#: the healthy nodes' goodput at k = 1 (GB/s, 1 % apart), nid004 5 % slower
GOODPUT = [10.0 * np.exp(d) for d in (0.008, -0.006, 0.002, -0.010, 0.004, -0.002, 0.006, 0.0)]
GOODPUT[3] *= 0.95


def precision(value, rel_se):
    """A precision record (interface of contract.PRECISION_FIELD) of ``value`` with ``rel_se``."""
    half = 1.96 * rel_se
    return {"samples": 2000, "blocks": 5, "ci95": [value * np.exp(-half), value * np.exp(half)],
            "p10": value * np.exp(1.28 * rel_se), "block_spread": rel_se * 2, "rel_se": rel_se,
            "stopped": "target" if rel_se < 0.01 else "cap"}


def case(node, goodput, rel_se=None, rep=0):
    """A --distribute test case of ``node`` (its goodput_1MiB and latency_8B), with a precision
    record of both where ``rel_se`` is given."""
    perf = {"goodput_1MiB": (goodput, "GB/s"), "latency_8B": (2.0, "us")}
    tc = sessions.case(CHECK, perf, when=sessions.T0 + rep, display_name=sessions.distributed(
                           CHECK, "ci", "cluster", node, rep), job_nodelist=[node], fail_phase=None,
                       fail_reason=None, outputdir=None, jobid="1")
    if rel_se is not None:
        tc[PRECISION_FIELD] = {var: precision(val, rel_se) for var, (val, _) in perf.items()}
    return tc


def session(path, rel_se, goodput=GOODPUT, uuid="u-1"):
    return sessions.write(path, sessions.report([case(n, float(g), rel_se) for n, g in zip(NODES, goodput)], uuid,
                                                cmdline="reframe -c checks/ --system ci:cluster --distribute=all -r"))


def rows(path):
    with open(path) as fp:
        return list(csv.DictReader(fp))


def test_the_reader_takes_each_variables_precision_and_none_is_unknown(tmp_path):
    from gpucomm.analysis.acceptance import read_sessions
    _, perf = read_sessions([session(tmp_path / "p.json", 0.004)])
    assert perf["rel_se"].tolist() == pytest.approx([0.004] * 16)
    g = perf[perf["var"] == "goodput_1MiB"].iloc[0]
    assert g["ci_low"] < g["value"] < g["ci_high"] and g["samples"] == 2000 and g["stopped"] == "target"
    # a report without it (a native tool's variable, an older report): NaN, today's verdict
    _, perf = read_sessions([session(tmp_path / "n.json", None, uuid="u-2")])
    assert perf["rel_se"].isna().all() and perf["stopped"].isna().all()
    # a damaged record is unknown, never an error
    doc = json.loads((tmp_path / "p.json").read_text())
    doc["runs"][0]["testcases"][0][PRECISION_FIELD] = {"goodput_1MiB": {"rel_se": "wide"}, "latency_8B": 3}
    (tmp_path / "d.json").write_text(json.dumps(doc))
    _, perf = read_sessions([str(tmp_path / "d.json")])
    assert perf["rel_se"].isna().sum() == 2


def test_own_variance_only_widens():
    k = np.array([1, 1, 5, 5, 0])
    se = np.array([[0.05, np.nan], [np.nan, np.nan], [0.001, 0.001], [0.05, 0.03], [np.nan, np.nan]])
    base = (sc.location_sd(k) * 0.01) ** 2
    got = sc.own_variance(k, 0.01, se)
    assert got[1] == base[1] and got[2] == base[2]          # unknown, or narrower: unchanged
    assert got[0] == pytest.approx(0.05 ** 2) and got[3] == pytest.approx((0.05 ** 2 + 0.03 ** 2) / 2 / 5)
    assert np.isnan(got[4])
    assert np.array_equal(sc.own_variance(k, 0.01), base, equal_nan=True)


def test_the_same_values_with_a_wide_and_a_narrow_interval_at_k1():
    """The issue's test: a k = 1 fleet, one node 5 % slower; with narrow intervals (0.2 %) the
    screening flags it (a suspect at k = 1), with wide ones (5 %) it cannot: its se is the runs'."""
    b = sc.badness(GOODPUT, -1)[:, None]
    judged = {}
    for name, rel in (("none", None), ("narrow", 0.002), ("wide", 0.05)):
        se = None if rel is None else np.full(b.shape, rel)
        judged[name] = fleetrule.judge(b, 3, 1e-2, 0.02, run_se=se)
    assert list(np.flatnonzero(judged["narrow"].flag)) == [3] == list(np.flatnonzero(judged["none"].flag))
    assert not judged["wide"].flag.any()
    wide, none = judged["wide"], judged["none"]
    assert (wide.se >= none.se).all() and (judged["narrow"].se >= none.se).all()   # never narrower
    assert wide.sees() > 0.15 > 0.05 > judged["narrow"].sees()
    assert wide.run_se == pytest.approx(np.full(8, 0.05)) and np.isnan(none.run_se).all()


@pytest.mark.parametrize("rel, code, flagged", [(0.002, EXIT_RETEST, {"nid004"}), (0.05, None, set())])
def test_acceptance_at_k1_reads_the_precision_from_the_session_report(tmp_path, rel, code, flagged):
    from gpucomm.analysis import acceptance
    got = acceptance.main([session(tmp_path / "s.json", rel), "--out", str(tmp_path / "o")])
    suspects = {r["node"] for r in rows(tmp_path / "o" / "suspects.csv")}
    assert suspects == flagged and not rows(tmp_path / "o" / "drain.csv")
    noise = {r["variable"]: r for r in rows(tmp_path / "o" / "noise.csv")}
    assert float(noise["goodput_1MiB"]["run_se"]) == pytest.approx(rel)
    if code is not None:
        assert got == code
    else:  # the noise row says what it can see, and that the runs' own error limits it
        assert got != acceptance.EXIT_REPORT_FAIL
        assert float(noise["goodput_1MiB"]["detectable_loss"]) > 0.15
        assert "its runs' own standard error, 5.0% a run, is what limits it" in noise["goodput_1MiB"]["verdict"]


def _series(last_rel_se):
    """A node's 12 nights of one goodput (0.5 % night to night, declared 0.2 % each), the last 6 %
    slower and declaring ``last_rel_se``."""
    rng = np.random.default_rng(5)
    vals = 10.0 * np.exp(rng.normal(0, 0.005, 12))
    vals[-1] *= 0.94
    s = drift.Series(key=("ci", "cluster", "nid001", CHECK, "goodput_1MiB"), unit="GB/s", sign=-1)
    for t, v in enumerate(vals):
        s.nights.append(sc.badness([v], -1))
        s.run_se.append(np.array([last_rel_se if t == len(vals) - 1 else 0.002]))
        s.times.append(1764748800.0 + 86400 * t)
        s.healthy.append(True)
        s.sessions.append(f"u-{t}")
        s.current.append(t == len(vals) - 1)
    return s


def test_the_nightly_adds_tonights_own_error_to_its_standard_error():
    narrow = drift.judge_series(_series(0.002), [3] * 12).iloc[-1]
    wide = drift.judge_series(_series(0.05), [3] * 12).iloc[-1]
    unknown = drift.judge_series(_series(np.nan), [3] * 12).iloc[-1]
    assert narrow["status"] == "suspect" and unknown["status"] == "suspect"
    assert wide["status"] not in ("suspect", "FAIL")
    assert wide["se"] == pytest.approx(np.hypot(unknown["se"], 0.05))
    assert narrow["se"] == pytest.approx(np.hypot(unknown["se"], 0.002))
