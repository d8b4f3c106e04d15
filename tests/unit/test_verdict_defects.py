"""The verdicts' defects the probes of issue 51 found, one test each, and each perf variable's
direction read once (contract.PERF_UNIT_DIRECTION) by every rule: the fleet rule, the nightly
drift, the node pair matrix's pair rule, the report's trend and the references."""

import json
import threading

import numpy as np
import pandas as pd
import pytest

import sessions
from gpucomm.analysis import acceptance, drift, drift_synthetic as ds, retest, statcore as sc, tolerances
from gpucomm.analysis.report import tables
from gpucomm.constants import EXIT_BAD_INPUT, EXIT_OK, EXIT_REPORT_FAIL
from test_acceptance import CHECK, NODES, case, lists, rows, session, values

# -- the retest keeps the session's scope ------------------------------------------------------

@pytest.mark.parametrize("cmdline,scope", [
    ("reframe -c checks/ --mode acceptance --distribute=avail -J reservation=new-nodes --repeat=2 -r",
     ["-J", "reservation=new-nodes", "--distribute=avail"]),
    ("reframe -c checks/ --mode acceptance --distribute all --repeat 2 -J reservation=r1 -r",
     ["-J", "reservation=r1", "--distribute=all"]),
    ("reframe -c checks/ --mode acceptance --distribute -J--nodelist=nid[001-008] --repeat=2 -r",
     ["--distribute=all"]),
])
def test_the_retest_keeps_the_reservation_and_the_distribute_state_in_either_spelling(cmdline, scope):
    """Old: the retest dropped every -J (a suspect inside the reservation is RESERVED: its retest
    pends for ever) and `--distribute all` became "unrecognized arguments: all"."""
    cmd = retest.retest_command([cmdline], "nid004", [CHECK], "ci:cluster")
    words = cmd.split()
    for w in scope:
        assert w in words, cmd
    assert "all" not in words and "nid[001-008]" not in cmd
    assert words[-5:] == ["-J", "nodelist=nid004", "--repeat=5", "-r"][-4:] or "nodelist=nid004" in cmd


# -- a check aborted on every node, a failure that passed on a retry -------------------------

def test_a_check_aborted_on_every_node_drains_them_naming_it(tmp_path, capsys):
    """Old: 8 nodes passed, exit 0, not a word."""
    other = [case(n, "AllReduceCheck %method=host", {}, rep=r, result="abort", phase="run", reason="KeyboardInterrupt")
             for n in NODES for r in range(2)]
    s = session(tmp_path / "s.json", values(k=5), extra=other)
    assert acceptance.main([s, "--out", str(tmp_path / "o")]) == EXIT_REPORT_FAIL
    drain, passed = lists(tmp_path / "o")
    assert not passed and {r["node"] for r in drain} == set(NODES)
    assert all("AllReduceCheck %method=host abort on every node" in r["reason"] for r in drain)


def test_a_failure_that_passed_on_reframes_retry_drains_its_node(tmp_path):
    """Old: the reader kept a retried test case's last run: a data mismatch that passed on
    --max-retries was a silent pass."""
    vals = values(k=5)
    cases = [case(n, CHECK, {"goodput_1MiB": (float(g), "GB/s"), "latency_8B": (float(lat), "us")}, rep=r)
             for n, reps in vals.items() for r, (g, lat) in enumerate(reps)]
    first = dict(cases[0], result="fail", fail_phase="sanity", fail_reason="payload failed: rank 1: data mismatch",
                 run_index=0)
    doc = {"session_info": {"uuid": "u-r", "cmdline": "reframe --distribute=all --repeat=5 --max-retries=1 -r"},
           "runs": [{"testcases": cases[:1] and [first] + cases[1:]}, {"testcases": [dict(cases[0], run_index=1)]}]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    assert acceptance.main([str(path), "--out", str(tmp_path / "o")]) == EXIT_REPORT_FAIL
    (row,) = rows(tmp_path / "o" / "drain.csv")
    assert row["node"] == "nid001" and "passed on ReFrame's retry (run 0: fail (sanity: payload failed" in row["reason"]


# -- bad input of the verdict ------------------------------------------------------------------

def test_a_nid_that_is_not_the_job_s_node_is_one_line(tmp_path, capsys):
    vals = values(k=2, nodes=NODES[:4])
    cases = [case(n, CHECK, {"goodput_1MiB": (float(g), "GB/s")}, rep=r, nodes=["nid999" if n == "nid002" else n])
             for n, reps in vals.items() for r, (g, _) in enumerate(reps)]
    path = sessions.write(tmp_path / "s.json", sessions.report(cases, "u"))
    assert acceptance.main([path, "--out", str(tmp_path / "o")]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "%.nid=nid002 but ReFrame ran it on nid999" in err[0]


def test_two_verdicts_into_one_folder_at_once_the_second_is_refused(tmp_path, capsys, monkeypatch):
    s = session(tmp_path / "s.json", values(k=5))
    started, release = threading.Event(), threading.Event()
    real = acceptance.evaluate

    def slow(*args, **kwargs):
        started.set()
        release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(acceptance, "evaluate", slow)
    out = tmp_path / "o"
    first = threading.Thread(target=lambda: acceptance.main([s, "--out", str(out)]))
    first.start()
    assert started.wait(30)
    monkeypatch.setattr(acceptance, "evaluate", real)
    assert acceptance.main([s, "--out", str(out), "--force"]) == EXIT_BAD_INPUT
    release.set()
    first.join(30)
    assert "another gpucomm acceptance is writing to" in capsys.readouterr().err
    assert (out / "drain.csv").exists() and not (out / ".gpucomm-acceptance.lock").exists()


@pytest.mark.parametrize("arg,says", [("--min-loss=rate=0.5", None), ("--min-loss=speed=0.1", "no kind of variable"),
                                      ("--min-loss=1.5", "not a fraction")])
def test_min_loss_per_kind(tmp_path, capsys, arg, says):
    s = session(tmp_path / "s.json", values(k=5, slow="nid006", loss=0.07))
    rc = acceptance.main([s, arg, "--out", str(tmp_path / "o")])
    if says is None:  # a 50 % floor for rates: the 7 % slow goodput drains nothing
        assert rc == EXIT_OK, capsys.readouterr().out
    else:
        assert rc == EXIT_BAD_INPUT and says in capsys.readouterr().err


# -- the class file never broken ---------------------------------------------------------------

def test_a_class_file_of_one_repeat_is_valid_json_and_refuses_what_is_no_number(tmp_path, capsys):
    """Old: k = 1 gave an inf within-df: 732 bytes of invalid JSON (json.dump's Infinity)."""
    s = session(tmp_path / "s.json", values(k=1))
    cls = tmp_path / "c.json"
    assert tolerances.main(["--fleet", s, "--class", str(cls), "--md", str(tmp_path / "c.md")]) == 0
    doc = json.loads(cls.read_text())  # strict JSON: no Infinity, no NaN
    assert all(v["within_df"] is None or v["within_df"] > 0 for v in doc["variables"].values())
    assert acceptance.load_class(str(cls))["variables"]
    bad = dict(doc)
    first = next(iter(bad["variables"]))
    bad["variables"][first]["centre"] = None
    cls.write_text(json.dumps(bad))
    with pytest.raises(acceptance.SessionError, match="a centre or spread that is not a number"):
        acceptance.load_class(str(cls))


def test_a_full_disk_leaves_no_half_class_file(tmp_path, monkeypatch):
    s = session(tmp_path / "s.json", values(k=5))
    cls = tmp_path / "c.json"
    cls.write_text("earlier")
    real = open

    def full(path, mode="r", *a, **k):
        if str(path).startswith(str(cls)) and "w" in mode:
            raise OSError(28, "No space left on device")
        return real(path, mode, *a, **k)

    monkeypatch.setattr("builtins.open", full)
    rc = tolerances.main(["--fleet", s, "--class", str(cls), "--md", str(tmp_path / "c.md")])
    monkeypatch.undo()
    assert rc != 0 and cls.read_text() == "earlier" and not list(tmp_path.glob("c.json.tmp*"))


def test_no_reference_from_an_inf_value():
    """Old: an inf among the healthy values proposed an unbounded reference."""
    assert tolerances.propose([1.0, 1.1, float("inf")], "us")[2] < 1.0
    ref, why = tolerances.proposal([float("inf"), float("nan")], "GB/s")
    assert ref is None and "no value is a measurement" in why


# -- each direction through every rule ---------------------------------------------------------

DIRECTIONS = [("GB/s", 0.8), ("us", 1 / 0.8), ("x", 1 / 0.8)]  # 20 % slower: a rate lower, a time or slowdown higher


@pytest.mark.parametrize("unit,slower", DIRECTIONS)
def test_the_fleet_rule_drains_the_slower_side_only(unit, slower):
    rng = np.random.default_rng(1)
    vals = 10 * np.exp(rng.normal(0, 0.005, (16, 5)))
    vals[3] *= slower
    vals[5] /= slower  # as much faster: never drained
    sign = sc.worse_sign(unit)
    j = acceptance.fleetrule.judge(sc.badness(vals, sign), 10, min_loss=sc.min_loss(unit, sign))
    assert list(np.flatnonzero(j.flag)) == [3]


@pytest.mark.parametrize("unit,slower", DIRECTIONS)
def test_the_nightly_fails_the_slower_side_only(unit, slower):
    """Old: NoiseCheck's victim_slowdown_* (unit 'x'): a night at 2.0x was "ok", one at 0.5x
    (better) "FAIL step"."""
    rng = np.random.default_rng(2)
    for factor, want in ((slower, "FAIL"), (1 / slower, "ok")):
        nights = ds.night_values(rng, 30, 0.005, 2, transient=0.0, time_unit=sc.worse_sign(unit) > 0)
        nights[-1] = nights[-1] * factor
        s = drift.Series(key=("s", "p", "n", "T", "v"), unit=unit, sign=sc.worse_sign(unit))
        for i, v in enumerate(nights):
            s.nights.append(sc.badness(v, s.sign))
            s.times.append(1.8e9 + 86400 * i)
            s.healthy.append(True)
            s.sessions.append(f"s{i}")
        assert drift.judge_series(s, [3] * 30)["status"].iloc[-1] == want, (unit, factor)


@pytest.mark.parametrize("unit,slower", DIRECTIONS)
def test_the_trend_and_the_references_read_the_same_direction(unit, slower):
    assert sc.lower_is_better(unit) == (slower > 1)
    ref = tolerances.propose([1.0, 1.01, 0.99, 1.02], unit)
    assert (ref[2] is not None) == (slower > 1) and (ref[1] is not None) == (slower < 1)
    perf = pd.DataFrame([{"system": "s", "partition": "p", "environ": "e", "test": "T", "nodes": "n", "var": "v",
                          "unit": unit, "value": v, "ref": None, "lower": None, "upper": None, "var_result": None,
                          "case": "T", "result": "pass", "time": t, "session": f"s{t}", "history": False}
                         for t, v in ((1, 1.0), (2, 1.0), (3, slower))])
    cols = ["system", "partition", "environ", "test", "case", "nodes", "time", "session", "result", "history"]
    cases = perf[cols].assign(node="n", dry_run=False)
    trend = tables.compare(perf, cases, (0.05, []))
    assert trend["status"].iloc[0] == "regressed"


def test_the_pair_rule_finds_the_slow_node_of_either_direction():
    nodes = [f"n{i}" for i in range(6)]
    for unit, slower in DIRECTIONS[:2]:
        recs = []
        for a in range(6):
            for b in range(a + 1, 6):
                v = 10.0 * (slower if 2 in (a, b) else 1.0) * (1 + 0.001 * (a + b))
                recs.append({"var": f"conc_uni_1MiB_n{a}-n{b}", "value": v, "unit": unit})
        found, _ = acceptance.judge_pairs(pd.DataFrame(recs), nodes)
        assert list(found) == ["n2"], (unit, found)


# -- the nightly's dates -----------------------------------------------------------------------

def _perf(times_history, times_now):
    rows = [{"node": "n1", "nodes": "n1", "time": t, "history": True} for t in times_history]
    rows += [{"node": "n1", "nodes": "n1", "time": t, "history": False} for t in times_now]
    return pd.DataFrame(rows)


def test_a_night_older_than_its_history_and_a_since_after_tonight_are_bad_input():
    """Old: both read as "no history" (references only), exit 0."""
    drift._check_dates(_perf([1.0e9, 1.1e9], [1.2e9]), None)
    with pytest.raises(drift.DriftInputError, match="older than a night of its history"):
        drift._check_dates(_perf([1.0e9, 1.3e9], [1.2e9]), None)
    with pytest.raises(drift.DriftInputError, match="after this run's newest session"):
        drift._check_dates(_perf([1.0e9], [1.2e9]), pd.Timestamp(1.25e9, unit="s", tz="UTC"))


def test_nightly_refuses_a_since_after_tonight_before_reframe_runs(tmp_path, capsys):
    from gpucomm.analysis import nightly
    rc = nightly.main(["--out", str(tmp_path / "n"), "--since", "2999-01-01", "-n", "NoSuchCheck"])
    assert rc == EXIT_BAD_INPUT and "a date after tonight" in capsys.readouterr().err
    assert not (tmp_path / "n").exists()


def test_a_node_none_of_whose_variables_can_be_judged_is_not_judged_exit_12(tmp_path, capsys):
    """One repeat a node among three nodes, no class file: no within spread, a between spread of
    one degree of freedom: "not judged" (exit 12), never a pass; blindness of a variable alone is
    said once and judges the node on its other variables."""
    from gpucomm.constants import EXIT_ACCEPTANCE_NOT_JUDGED
    s = session(tmp_path / "s.json", values(k=1, nodes=NODES[:3]))
    assert acceptance.main([s, "--out", str(tmp_path / "o")]) == EXIT_ACCEPTANCE_NOT_JUDGED
    _, passed = lists(tmp_path / "o")
    assert {r["verdict"] for r in passed} == {"not judged"}
    assert "0 node(s) pass, 3 not judged" in capsys.readouterr().out


def test_a_night_slower_on_many_variables_fails_by_the_nodes_score():
    """Old: a node slower on every variable in one night, each below its own bound, was "N
    suspects, PASS, exit 0".  Now its score (the mean of its variables' z against the scores its
    history's nights would have had) fails that night; a healthy night does not."""
    rng = np.random.default_rng(9)
    nights, nvars = 30, 20
    rows_ = []
    for n in range(nights + 1):
        slow = 1.035 if n == nights else 1.0
        for v in range(nvars):
            rows_.append({"system": "s", "partition": "p", "node": "n1", "test": "T", "var": f"v{v}", "unit": "us",
                          "value": 10 * slow * np.exp(rng.normal(0, 0.01)), "time": 1.8e9 + 86400 * n,
                          "session": f"s{n}", "night": n, "healthy": True, "current": n == nights})
    df = pd.DataFrame(rows_)
    d = drift.judge_measurements(df)
    score = d.latest[d.latest["test"] == drift.SCORE_TEST]
    assert score["status"].item() == "FAIL", score.T
    assert (d.latest.loc[d.latest["test"] != drift.SCORE_TEST, "status"] != "FAIL").all()
    healthy = drift.judge_measurements(df[df["night"] < nights].assign(current=lambda x: x["night"] == nights - 1))
    assert (healthy.latest["status"] != "FAIL").all()
