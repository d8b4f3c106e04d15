"""The nightly drift verdict (gpucomm.analysis.drift, docs/nightly.md "Against the node's own
history"): the fast version of the seeded benchmark (bench/results/2026-12-03-cpu-2core/
41-nightly-drift-synthetic has the full one) and ``gpucomm report`` on nights made from a
committed session: a variable 5 % lower on the last night fails the run (exit 6) by name, first;
bad input.  The committed health runs replayed as nights: test_drift_replay.py."""

import copy
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpucomm import constants
from gpucomm.analysis import drift, drift_synthetic as ds, nightly, statcore as sc
from gpucomm.analysis.report import drift_page, main

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "tests/data/h200x2-runs/health/13-health-validation/report-health-1.json"
LOWERED = ("PairMatrixCheck %method=ccl", "uni_256MiB_0-1")
NIGHTS = 20  # of history made from TEMPLATE


def test_the_nights_spreads_are_the_cores():
    """The nights' within spread is statcore.within of the nights with several measurements (the
    fleet's estimator: one measurement's standard deviation, unbiased on normal repeats of 2 to 5
    a night), their night-to-night spread statcore.spread; a history without repeats has none."""
    rng = np.random.default_rng(3)
    nights = [rng.normal(size=rng.integers(1, 6)) for _ in range(20000)]
    within = drift._within(nights, np.arange(len(nights)))
    assert within == pytest.approx(1.0, abs=0.03)
    assert sc.spread(rng.normal(size=5000)) == pytest.approx(1.0, rel=0.04)
    assert math.isnan(drift._within([np.array([1.0])], np.arange(1)))


def test_bounds_and_cusum_threshold():
    b1, b2 = drift.bounds(30, 59)
    assert b1 > b2 > 2 and drift.bounds(30, 5)[0] > b1  # a short history asks for a larger z
    assert drift.cusum_h(30) > drift.cusum_h(1) > 0


def test_synthetic_fast():
    """A few seeded node-years (the full benchmark's 1/20th): no alarm on healthy nights with
    transients; a 5 % step on a 1 %-noise variable caught on its first night (k=2), a 3 % step
    within 3 nights."""
    healthy = ds.false_alarms(seed=41, nodes=1, nights=150, k=2, m=6)
    assert healthy["alarms"] == 0
    step = ds.detection(seed=42, trials=20, noise=0.01, kind="step", size=0.05, k=2, history=40, after=3)
    assert step["first_night"] == 1.0
    small = ds.detection(seed=43, trials=20, noise=0.01, kind="step", size=0.03, k=2, history=40, after=3)
    assert small["within_3_nights"] >= 0.9


def test_a_transient_measurement_confirms_nothing():
    rng = np.random.default_rng(5)
    nights = ds.night_values(rng, 60, 0.01, 2, transient=0.0)
    nights[-1] = nights[-1].copy()
    nights[-1][0] *= 0.7  # one of the last night's two measurements 30 % slow
    res = drift.judge_series(ds.series(nights, "GB/s"), [30] * 60)
    assert res["status"].iloc[-1] == "ok"
    nights[-1][1] *= 0.95  # the other one 5 % slow too: confirmed
    res = drift.judge_series(ds.series(nights, "GB/s"), [30] * 60)
    assert (res["status"].iloc[-1], res["rule"].iloc[-1]) == ("FAIL", "step")


def test_too_little_history_is_references_only():
    rng = np.random.default_rng(6)
    res = drift.judge_series(ds.series(ds.night_values(rng, 4, 0.01, 1), "us"), [3] * 4)
    assert (res["status"] == "new").all()


def test_a_variable_too_noisy_to_see_a_node_half_as_fast_is_blind_not_ok():
    """Old: on the CI cluster (bench/results/2026-12-03-cpu-2core/41-ci-cluster-nightly call 3)
    variables whose two-nights rule could see, at best, a 12x change were "ok" every night.  Now a
    variable that cannot see a 50 % loss is "blind" (references only, said), a quiet one "ok", and
    a blind one that its rules do see still fails."""
    rng = np.random.default_rng(7)
    noisy = ds.night_values(rng, 12, 0.4, 2, transient=0.0)
    res = drift.judge_series(ds.series(noisy, "GB/s"), [6] * 12)
    judged = res[res["history"] >= drift.MIN_NIGHTS]
    assert (judged["status"] == "blind").all() and (judged["sees"] >= drift.BLIND_LOSS).all(), judged
    assert judged["rule"].iloc[-1].startswith("sees a loss of ")
    quiet = drift.judge_series(ds.series(ds.night_values(rng, 12, 0.01, 2, transient=0.0), "GB/s"), [6] * 12)
    assert (quiet[quiet["history"] >= drift.MIN_NIGHTS]["status"] == "ok").all()
    crushed = [g.copy() for g in noisy]
    crushed[-2] = crushed[-2] / 1000
    crushed[-1] = crushed[-1] / 1000  # 1000x slower two nights running: seen even here
    res = drift.judge_series(ds.series(crushed, "GB/s"), [6] * 12)
    assert res["status"].iloc[-1] == "FAIL", res.tail(3)
    table = res.assign(system="ci", partition="cluster", node="gcn1", test="PingPongCheck", var="goodput_1MiB",
                       unit="GB/s")
    d = drift.Drift(table, table.tail(1).assign(status="blind", sees=5.0), [])
    text = "\n".join(drift_page.lines(d))
    assert "0 of 1 judged against their node's own history" in text
    assert "gcn1 ci:cluster: 1 variables too noisy to see a node 50% slower over two nights" in text


# --- gpucomm report on nights made from one committed session ---------------------------------

def _night(template, when, uuid, rng, lower=None, system=None):
    doc = copy.deepcopy(template)
    info = doc["session_info"]
    shift = when - info["time_end_unix"]
    info.update(uuid=uuid, time_end_unix=when, time_start_unix=info["time_start_unix"] + shift)
    for tc in doc["runs"][0]["testcases"]:
        if system:
            tc["system"] = system
        if tc.get("job_completion_time_unix"):
            tc["job_completion_time_unix"] += shift
        for key, val in (tc.get("perfvalues") or {}).items():
            if val[0] is None:
                continue
            factor = float(np.exp(0.003 * rng.standard_normal()))
            if lower and tc["name"] == lower[0] and key.endswith(":" + lower[1]):
                factor *= 0.95
            val[0] = val[0] * factor
    return doc


def _write(path, doc):
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture
def nights(tmp_path):
    template = json.loads(TEMPLATE.read_text())
    assert template["session_info"]["num_failures"] == 0
    rng = np.random.default_rng(41)
    hist = tmp_path / "hist"
    hist.mkdir()
    t0 = 1.8e9
    for i in range(NIGHTS):
        _write(hist / f"night-{i:02d}.json", _night(template, t0 + 86400 * i, f"n{i}", rng))
    return template, hist, t0 + 86400 * NIGHTS, rng


def _report(args, capsys):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_report_fails_a_lowered_variable_first(nights, tmp_path, capsys):
    template, hist, tonight, rng = nights
    cur = [_write(tmp_path / f"tonight-{j}.json",
                  _night(template, tonight + 3600 * j, f"t{j}", rng, lower=LOWERED)) for j in range(2)]
    out = tmp_path / "rep"
    code, stdout, err = _report([*cur, "--history", hist, "-o", out, "-q", "--paper", "none"], capsys)
    assert code == constants.EXIT_REPORT_FAIL, stdout + err
    lines = stdout.splitlines()
    assert lines[0].startswith("gpucomm health: FAIL (nightly drift failed; ReFrame passed all")
    assert lines[1].startswith("nightly drift: 1 variable failed")
    assert "FAIL  vm  local:h200x2  6 test cases, nightly drift: 1 variable slower than its history" in lines
    assert lines[2].startswith(f"DRIFT FAIL  vm local:h200x2 {LOWERED[0]}: {LOWERED[1]} = ")
    assert "history centre" in lines[2] and f"({NIGHTS} nights), change -" in lines[2] and ", z " in lines[2]
    table = pd.read_csv(out / "drift.csv")
    assert list(table.loc[table["status"] == "FAIL", "var"]) == [LOWERED[1]]
    assert (out / "drift-local-h200x2-vm.png").exists()
    assert "drift-local-h200x2-vm.png" not in stdout  # the page embeds it

    # the same night without the loss: PASS, exit 0, nothing flagged
    cur = [_write(tmp_path / f"ok-{j}.json", _night(template, tonight + 3600 * j, f"o{j}", rng)) for j in range(2)]
    code, stdout, err = _report([*cur, "--history", hist, "-o", tmp_path / "ok", "-q", "--paper", "none"], capsys)
    assert code == constants.EXIT_OK, stdout + err
    assert stdout.splitlines()[1].startswith("nightly drift: 0 variables failed, 0 suspect")


def test_report_bad_input(nights, tmp_path, capsys):
    template, hist, tonight, rng = nights
    # another system's nights mixed in, and a truncated file: kept apart / skipped, one line each
    for i in range(6):
        _write(hist / f"other-{i}.json", _night(template, tonight - 86400 * (i + 1), f"x{i}", rng, system="other"))
    (hist / "broken.json").write_text('{"session_info": {"uuid": "b"}, "runs": [')
    cur = _write(tmp_path / "tonight.json", _night(template, tonight, "t", rng))
    code, stdout, err = _report([cur, "--history", hist, "-o", tmp_path / "r", "-q", "--paper", "none"], capsys)
    assert code == constants.EXIT_OK, stdout + err
    assert sum("kept apart" in line and "vm other:h200x2 (6 nights)" in line for line in stdout.splitlines()) == 1
    assert sum("broken.json" in line for line in err.splitlines()) == 1
    # no history at all: references only, said once
    code, stdout, _ = _report([cur, "-o", tmp_path / "alone", "-q", "--paper", "none"], capsys)
    assert code == constants.EXIT_OK
    said = [line for line in stdout.splitlines() if "more needed: references only" in line]
    assert len(said) == 1 and "0 healthy nights of history, 5 more needed" in said[0]
    # bad options: one line, exit 2
    for bad in (["--since", "yesterday-ish"], ["--night-gap", "-1"], ["--night-gap", "nan"]):
        code, _, err = _report([cur, "-o", tmp_path / "bad", *bad], capsys)
        assert code == constants.EXIT_BAD_INPUT and len(err.strip().splitlines()) == 1, err


def test_since_and_software_change_leave_nights_out(nights, tmp_path, capsys):
    template, hist, tonight, rng = nights
    changed = copy.deepcopy(template)
    for tc in changed["runs"][0]["testcases"]:
        tc["modules"] = ["nccl/2.29"]
    for i in range(3):
        _write(hist / f"new-{i}.json", _night(changed, tonight + 86400 * i, f"s{i}", rng))
    cur = _write(tmp_path / "tonight.json", _night(changed, tonight + 86400 * 3, "t", rng))
    code, stdout, _ = _report([cur, "--history", hist, "-o", tmp_path / "r", "-q", "--paper", "none"], capsys)
    assert code == constants.EXIT_OK
    assert f"{NIGHTS} nights before a software change left out of its history" in stdout
    assert "3 healthy nights of history, 2 more needed: references only" in stdout
    since = pd.Timestamp(tonight - 86400 * 10, unit="s", tz="UTC").strftime("%Y-%m-%d")
    code, stdout, _ = _report([tmp_path / "tonight.json", "--history", hist, "-o", tmp_path / "s", "-q",
                               "--paper", "none", "--since", since], capsys)
    assert f"nightly drift: {NIGHTS - 10} sessions before --since {since} 00:00 UTC left out" in stdout, stdout


def test_nightly_passes_the_earlier_nights_and_checks_since_first(tmp_path, capsys):
    for name in ("2026-12-01", "2026-12-02", "empty"):
        (tmp_path / name).mkdir()
    for name in ("2026-12-01", "2026-12-02"):
        (tmp_path / name / "report.json").write_text("{}")
    tonight = tmp_path / "2026-12-03"
    assert nightly.nightly_history(str(tonight)) == [str(tmp_path / d / "report.json") for d in ("2026-12-01",
                                                                                               "2026-12-02")]
    assert nightly.nightly_history(str(tonight), ["none"]) == []
    assert nightly.nightly_history(str(tonight), ["a", "b"]) == ["a", "b"]
    # a bad --since is one line and exit 2 before ReFrame runs (no night folder made)
    assert nightly.main(["--since", "someday", "--out", str(tonight)]) == constants.EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--since 'someday': not a date" in err and not tonight.exists()
    for gap, why in (("abc", "--night-gap 'abc' is not a number of hours"), ("-1", "--night-gap -1.0: must be")):
        assert nightly.main(["--night-gap", gap, "--out", str(tonight)]) == constants.EXIT_BAD_INPUT
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and why in err and not tonight.exists(), err


def test_only_the_nights_that_judge_tonight_are_read():
    rng = np.random.default_rng(8)
    vals = ds.night_values(rng, drift.MAX_NIGHTS + 60, 0.01, 1, transient=0.0)
    df = pd.DataFrame([{"system": "s", "partition": "p", "node": "n1", "test": "T", "var": "v", "unit": "GB/s",
                        "value": v, "time": 1.8e9 + 86400 * i, "session": f"s{i}", "night": i, "healthy": True,
                        "current": True} for i, night in enumerate(vals) for v in night])
    d = drift.judge_measurements(df)
    assert len(d.table) == drift.MAX_NIGHTS and d.table["time"].min() == 1.8e9 + 86400 * 60
    assert len(d.latest) == 1 and d.latest["status"].item() == "ok"


def test_new_nodes_in_the_same_state_are_one_line():
    from gpucomm.analysis.report.drift_page import lines
    rows = [{"system": "alps", "partition": "normal", "node": f"nid{n:05d}", "test": "T", "var": f"v{v}",
             "status": "new", "history": 1} for n in range(12) for v in range(3)]
    rows += [{"system": "alps", "partition": "normal", "node": "nid09999", "test": "T", "var": "v0",
              "status": "new", "history": 3}]
    latest = pd.DataFrame(rows)
    said = [line for line in lines(drift.Drift(latest, latest, [])) if "more needed" in line]
    assert said == [
        "nightly drift: 12 nodes of alps:normal (nid00000, nid00001, nid00002, nid00003, nid00004 and 7 more): "
        "3 variables each have 1 healthy nights of history, 4 more needed: references only",
        "nightly drift: nid09999 alps:normal: 1 variables have 3 healthy nights of history, 2 more needed: "
        "references only"], said


def test_all_nodes_at_once_judge_as_each_variable_alone():
    # judge_measurements judges every variable of every node together (series of as many nights at
    # once, measurements scattered into arrays): each variable's rows must be judge_series' own
    rng = np.random.default_rng(5)
    rows = []
    for n in range(6):
        nights = [4, 7, 9, 12, 12, 30][n]
        for v in range(4):
            unit = ("GB/s", "us")[v % 2]
            gone = set(rng.choice(nights - 1, size=v % 3, replace=False).tolist())  # nights without the variable
            for t in (t for t in range(nights) if t not in gone):
                loss = 0.15 if (n, v) in ((3, 1), (5, 1), (5, 2)) and t >= nights - 2 else 0.0
                for j in range(int(rng.choice([1, 2, 5]))):
                    value = 10 * np.exp(rng.normal(0, 0.02) + (loss if unit == "us" else -loss))
                    rows.append({"system": "s", "partition": "p", "node": f"n{n}", "test": "T", "var": f"v{v}",
                                 "unit": unit, "value": np.nan if rng.random() < 0.03 else value,
                                 "time": 1e9 + 86400 * t + j, "session": f"s{t}", "night": t,
                                 "healthy": bool(rng.random() < 0.95), "current": t == nights - 1,
                                 "rel_se": rng.uniform(0.001, 0.01) if rng.random() < 0.5 else np.nan})
    df = pd.DataFrame(rows)
    df["healthy"] = df.groupby(["node", "night"])["healthy"].transform("all")
    table = drift.judge_measurements(df).table
    assert set(table["status"]) >= {"new", "ok", "FAIL"} and (table["test"] == drift.SCORE_TEST).any()
    for (node, var), g in df.groupby(["node", "var"]):
        m = df[df["node"] == node].drop_duplicates(["night", "var"]).groupby("night").size() + 1
        healthy = df[df["node"] == node].groupby("night")["healthy"].all()
        sign = sc.worse_sign(g["unit"].iloc[0])
        s = drift.Series(key=("s", "p", node, "T", var), unit=g["unit"].iloc[0], sign=sign)
        for t, night in g.groupby("night"):
            s.nights.append(sc.badness(night["value"].to_numpy(), sign))
            s.times.append(night["time"].min())
            s.sessions.append(f"s{t}")
            s.healthy.append(bool(healthy[t]))
            s.current.append(bool(night["current"].any()))
            s.run_se.append(night["rel_se"].to_numpy())
        alone = drift.judge_series(s, [int(m[t]) for t in sorted(g["night"].unique())])
        mine = table[(table["node"] == node) & (table["var"] == var)].reset_index(drop=True)
        assert list(mine["night"]) == sorted(g["night"].unique())
        for col in ("status", "rule", "history", "k"):
            assert list(mine[col]) == list(alone[col]), (node, var, col)
        for col in ("value", "median", "z", "se", "b1", "b2", "cusum", "sees"):
            np.testing.assert_allclose(mine[col].astype(float), alone[col].astype(float), rtol=1e-12,
                                       err_msg=f"{node} {var} {col}")
