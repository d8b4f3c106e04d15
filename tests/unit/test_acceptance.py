"""gpucomm acceptance (gpucomm.analysis.acceptance): the fleet verdict on synthetic sessions (ReFrame
run reports as ``--distribute=all --repeat=k`` writes them: one test case per node, check and
repeat), its bad input, and gpucomm tolerances --fleet on the same."""

import csv
import json
import time

import numpy as np
import pytest

import sessions
from gpucomm.constants import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    EXIT_REPORT_FAIL,
    EXIT_RETEST,
)
from gpucomm.contract import ERROR_PREFIX

NODES = [f"nid{i:03d}" for i in range(1, 9)]
CHECK = "PingPongCheck %method=host"


def case(node, name, perf, rep=0, result="pass", phase=None, reason=None, nodes=None):
    """A test case of ``name`` on ``node`` of ci:cluster in repeat ``rep`` (tests/sessions.py)."""
    return sessions.case(name, perf, result=result, when=sessions.T0 + rep,
                         display_name=sessions.distributed(name, "ci", "cluster", node, rep),
                         job_nodelist=nodes or [node], fail_phase=phase, fail_reason=reason, outputdir=None,
                         jobid="1")


def values(k=5, nodes=NODES, seed=1, slow=None, loss=0.0, noise=0.01):
    """{node: [(goodput, latency)] * k}: 1 % noise per repeat, ``slow`` ``loss`` low on goodput."""
    rng = np.random.default_rng(seed)
    out = {}
    for n in nodes:
        g = 10.0 * np.exp(rng.normal(0, noise, k)) * (1 - loss if n == slow else 1)
        lat = 2.0 * np.exp(rng.normal(0, noise, k))
        out[n] = list(zip(g, lat))
    return out


def session(path, vals, extra=(), uuid="u-1", cmdline=None):
    cases = [case(n, CHECK, {"goodput_1MiB": (float(g), "GB/s"), "latency_8B": (float(lat), "us")}, rep=r)
             for n, reps in vals.items() for r, (g, lat) in enumerate(reps)]
    k = max(len(v) for v in vals.values()) if vals else 1
    return sessions.write(path, sessions.report(cases + list(extra), uuid, cmdline=cmdline or
                                                f"reframe -c checks/ --system ci:cluster --mode acceptance "
                                                f"--distribute=all --repeat={k} -r"))


@pytest.fixture(scope="module")
def acc():
    from gpucomm.analysis import acceptance
    return acceptance


def rows(path):
    with open(path) as fp:
        return list(csv.DictReader(fp))


def lists(out):
    drain, passed = rows(out / "drain.csv"), rows(out / "pass.csv")
    dn, pn = {r["node"] for r in drain}, [r["node"] for r in passed]
    assert not dn & set(pn) and len(pn) == len(set(pn)), "a node in both lists, or twice"
    return drain, passed


def test_a_node_7pct_slow_at_k5_is_drained_alone_with_its_numbers(acc, tmp_path, capsys):
    rc = acc.main([session(tmp_path / "s.json", values(slow="nid006", loss=0.07)), "--out", str(tmp_path / "o")])
    assert rc == EXIT_REPORT_FAIL
    drain, passed = lists(tmp_path / "o")
    assert [(r["node"], r["variable"]) for r in drain] == [("nid006", "goodput_1MiB")]
    row = drain[0]
    assert row["check"] == CHECK and row["partition"] == "ci:cluster" and row["k"] == "5"
    assert 0.05 < float(row["loss"]) < 0.09 and float(row["z"]) > float(row["bound"])
    for col in ("within", "between", "detectable_loss", "centre", "value"):
        assert float(row[col]) > 0, col
    assert sorted(r["node"] for r in passed) == [n for n in NODES if n != "nid006"]
    noise = rows(tmp_path / "o" / "noise.csv")
    assert {r["variable"] for r in noise} == {"goodput_1MiB", "latency_8B"}
    assert all(r["within_source"] == "session repeats" and r["k"] == "5" for r in noise)
    assert "scontrol update nodename='nid006' state=drain" in capsys.readouterr().out


def test_a_healthy_fleet_with_repeats_drains_nothing(acc, tmp_path):
    for seed in range(3):
        out = tmp_path / f"o{seed}"
        assert acc.main([session(tmp_path / f"s{seed}.json", values(seed=seed)), "--out", str(out)]) == EXIT_OK
        drain, passed = lists(out)
        assert not drain and len(passed) == 8 and {r["verdict"] for r in passed} == {"pass"}


def test_a_slow_latency_is_high_not_low(acc, tmp_path):
    vals = values()
    vals["nid002"] = [(g, lat * 1.2) for g, lat in vals["nid002"]]
    vals["nid003"] = [(g, lat * 0.8) for g, lat in vals["nid003"]]  # faster: passes
    assert acc.main([session(tmp_path / "s.json", vals), "--out", str(tmp_path / "o")]) == EXIT_REPORT_FAIL
    assert [(r["node"], r["variable"]) for r in rows(tmp_path / "o" / "drain.csv")] == [("nid002", "latency_8B")]


def test_a_retest_selects_exactly_its_check():
    """ReFrame's -n: a space in the pattern matches nothing (the CI cluster's retest ran 0 checks)."""
    from gpucomm.analysis.retest import name_filter
    assert name_filter("PingPongCheck %method=host") == "^PingPongCheck%method=host"
    assert name_filter("MultiPingPongCheck %method=host %pairs=all") == "^MultiPingPongCheck%method=host%pairs=all"
    assert name_filter("NodeStateCheck") == "^NodeStateCheck$"


def test_few_repeats_make_a_suspect_and_its_retest_decides(acc, tmp_path, capsys):
    first = session(tmp_path / "s1.json", values(k=2, slow="nid004", loss=0.3))
    assert acc.main([first, "--out", str(tmp_path / "o1")]) == EXIT_RETEST  # not final
    drain, passed = lists(tmp_path / "o1")
    assert not drain
    sus = {r["node"]: r for r in rows(tmp_path / "o1" / "suspects.csv")}
    assert "nid004" in sus  # (k = 2 spreads are known to ~4 degrees of freedom: a healthy one may join it)
    cmd = sus["nid004"]["retest"]
    assert cmd.startswith("reframe ") and "-J nodelist=nid004" in cmd and "--repeat=5" in cmd
    assert "-n '^PingPongCheck%method=host'" in cmd and "--system ci:cluster" in cmd and "--distribute=all" in cmd
    assert {r["node"]: r["verdict"] for r in passed}["nid004"] == "suspect"
    assert "suspect" in capsys.readouterr().out
    # the retest confirms: drained
    slow_again = session(tmp_path / "r1.json", {"nid004": values(k=5, slow="nid004", loss=0.3, seed=9)["nid004"]},
                         uuid="u-2")
    assert acc.main([first, slow_again, "--out", str(tmp_path / "o2")]) == EXIT_REPORT_FAIL
    assert {r["node"] for r in rows(tmp_path / "o2" / "drain.csv")} == {"nid004"}
    # the retest is healthy: passes on retest
    healthy = session(tmp_path / "r2.json", {"nid004": values(k=8, seed=9)["nid004"]}, uuid="u-3")
    code = acc.main([first, healthy, "--out", str(tmp_path / "o3")])
    left = {r["node"] for r in rows(tmp_path / "o3" / "suspects.csv")}  # healthy nodes of k = 2 screened
    assert "nid004" not in left and code == (EXIT_RETEST if left else EXIT_OK)
    _, passed = lists(tmp_path / "o3")
    assert {r["node"]: r["verdict"] for r in passed}["nid004"] == "pass on retest"


def test_a_node_the_fleet_cannot_judge_is_not_judged_never_a_pass(acc, tmp_path, capsys):
    """Old: 4 nodes without a class file, one of them 100x slow but tightly measured (k=7) and the
    others at k=1: the pooled bound was out of reach of any loss, noise.csv said "cannot judge" and
    pass.csv listed the slow node "pass", exit 0.  Now every node whose variable the rule cannot
    judge, or cannot see a node half as fast on, is "not judged" (exit 12); with a class file the
    same session is judged and the slow node drained."""
    vals = values(k=1, nodes=NODES[:4], noise=0.2, seed=3)
    vals["nid004"] = [(g / 100, lat * 100) for g, lat in values(k=7, nodes=["nid004"], noise=0.001)["nid004"]]
    s = session(tmp_path / "s.json", vals)
    # now: the slow node is beyond every repeat of the others, far beyond the bound: drained; the
    # others (one repeat each among 3 nodes) are not judged, never a pass
    assert acc.main([s, "--out", str(tmp_path / "o")]) == EXIT_REPORT_FAIL
    drain, passed = lists(tmp_path / "o")
    verdicts = {r["node"]: r["verdict"] for r in passed}
    assert {r["node"] for r in drain} == {"nid004"}
    assert set(verdicts.values()) == {"not judged"}, passed
    note = {r["node"]: r["note"] for r in passed}["nid001"]
    assert note.startswith("none of its 2 variables could be judged")
    out = capsys.readouterr().out
    assert "0 node(s) pass, 3 not judged, 0 suspect(s) to retest, 1 to drain" in out
    assert "  not judged nid001: none of its 2 variables" in out
    # a class file from a healthy fleet as noisy judges it: drained
    from gpucomm.analysis import tolerances
    healthy = session(tmp_path / "h.json", values(k=5, noise=0.2), uuid="u-h")
    assert tolerances.main(["--fleet", healthy, "--class", str(tmp_path / "c.json"), "--md",
                            str(tmp_path / "c.md")]) == 0
    assert acc.main([s, "--class", str(tmp_path / "c.json"), "--out", str(tmp_path / "o2")]) == EXIT_REPORT_FAIL
    assert "nid004" in {r["node"] for r in rows(tmp_path / "o2" / "drain.csv")}


def test_every_node_is_in_one_list_whatever_its_cases_did(acc, tmp_path):
    vals = values(nodes=NODES[:6])
    extra = [case("nid007", CHECK, {}, result="skip", reason="needs two GPUs"),
             case("nid008", CHECK, {}, result=None),  # ReFrame recorded no result
             case("nid001", "AllReduceCheck %method=host", {"latency_8B": (5.0, "us")}),
             case("nid002", CHECK, {}, rep=5, result="fail", phase="sanity", reason="data mismatch at byte 8")]
    rc = acc.main([session(tmp_path / "s.json", vals, extra=extra), "--out", str(tmp_path / "o")])
    assert rc == EXIT_REPORT_FAIL
    drain, passed = lists(tmp_path / "o")
    reasons = {(r["node"], r["check"]): r["reason"] for r in drain}
    assert "no result for PingPongCheck" in reasons[("nid007", CHECK)]
    assert "no result for PingPongCheck" in reasons[("nid008", CHECK)]
    assert "sanity" in reasons[("nid002", CHECK)]
    for n in ("nid002", "nid003", "nid004", "nid005", "nid006"):  # no case of AllReduceCheck
        assert "no test case" in reasons[(n, "AllReduceCheck %method=host")]
    assert {r["node"] for r in drain} | {r["node"] for r in passed} == set(NODES)


def test_a_session_that_measured_nothing_fails(acc, tmp_path, capsys):
    extra = [case(n, CHECK, {}, result="skip", reason="needs two GPUs") for n in NODES]
    rc = acc.main([session(tmp_path / "s.json", {}, extra=extra), "--out", str(tmp_path / "o")])
    assert rc == EXIT_REPORT_FAIL
    drain, passed = lists(tmp_path / "o")
    assert not passed and {r["node"] for r in drain} == set(NODES)
    assert "measured nothing" in capsys.readouterr().out


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 0.0])
def test_a_value_that_is_no_measurement_drains_its_node_and_masks_nothing(acc, tmp_path, bad):
    vals = values(slow="nid006", loss=0.5)
    vals["nid002"][1] = (bad, vals["nid002"][1][1])
    rc = acc.main([session(tmp_path / "s.json", vals), "--out", str(tmp_path / "o")])
    assert rc == EXIT_REPORT_FAIL
    drained = {r["node"] for r in rows(tmp_path / "o" / "drain.csv")}
    assert drained == {"nid002", "nid006"}


def pair_cases(nodes, slow=None, result="pass", reason=None, k=1):
    from gpucomm.pairs import tournament
    perf, rng = {}, np.random.default_rng(3)
    for rnd in tournament(len(nodes)):
        for i, j in rnd:
            a, b = nodes[i], nodes[j]
            v = 10.0 * np.exp(rng.normal(0, 0.01)) * (0.5 if slow in (a, b) else 1)
            perf[f"conc_uni_256KiB_{a}-{b}"] = (v, "GB/s")
    return [case(None, "NodePairMatrixCheck %method=host", perf, rep=r, result=result,
                 phase="performance" if result == "fail" else None, reason=reason, nodes=list(nodes))
            for r in range(k)]


def test_a_node_pair_matrix_names_the_slow_node_and_a_failed_one_fails_the_session(acc, tmp_path):
    vals = values()
    s = session(tmp_path / "s.json", vals, extra=pair_cases(NODES, slow="nid003", result="fail", reason="slow"))
    assert acc.main([s, "--out", str(tmp_path / "o1")]) == EXIT_REPORT_FAIL
    assert {r["node"] for r in rows(tmp_path / "o1" / "drain.csv")} == {"nid003"}
    # failed, but no pair points at one node: every node of it drained, named
    s = session(tmp_path / "t.json", vals, extra=pair_cases(NODES, result="fail", reason="timed out"))
    assert acc.main([s, "--out", str(tmp_path / "o2")]) == EXIT_REPORT_FAIL
    drain = rows(tmp_path / "o2" / "drain.csv")
    assert {r["node"] for r in drain} == set(NODES) and all("no single node" in r["reason"] for r in drain)


def test_pair_judgement_is_near_linear(acc):
    """256 nodes' rounds (32,640 pairs) judged per node (1024 nodes: the speed benchmark,
    bench/results/2026-12-03-cpu-2core/40-fleet-verdict-synthetic); the time is printed, not judged."""
    import pandas as pd

    from gpucomm.pairs import tournament
    for n in (64, 256):
        nodes = [f"n{i:04d}" for i in range(n)]
        var, val = [], []
        rng = np.random.default_rng(1)
        for rnd in tournament(n):
            for i, j in rnd:
                var.append(f"conc_uni_256KiB_{nodes[i]}-{nodes[j]}")
                val.append(10.0 * np.exp(rng.normal(0, 0.01)) * (0.5 if 5 in (i, j) else 1))
        df = pd.DataFrame({"var": var, "value": val, "unit": "GB/s"})
        t0 = time.perf_counter()
        found, _ = acc.judge_pairs(df, nodes)
        print(f"{n} nodes, {len(df)} pairs: judged in {time.perf_counter() - t0:.2f} s")
        assert set(found) == {nodes[5]}


def test_a_bimodal_fleet_says_so_and_a_class_file_judges_it(acc, tmp_path, capsys):
    from gpucomm.analysis import tolerances
    healthy = session(tmp_path / "h.json", values(k=5, nodes=[f"nid{i:03d}" for i in range(20, 52)], seed=4))
    assert tolerances.main(["--fleet", healthy, "--class", str(tmp_path / "c.json"), "--md",
                            str(tmp_path / "t.md")]) == 0
    vals = values()
    slow = NODES[3:]  # 5 of 8 nodes 50 % slow
    for n in slow:
        vals[n] = [(g * 0.5, lat) for g, lat in vals[n]]
    s = session(tmp_path / "s.json", vals)
    assert acc.main([s, "--out", str(tmp_path / "o1")]) == EXIT_REPORT_FAIL
    assert "bimodal" in capsys.readouterr().out
    assert {r["node"] for r in rows(tmp_path / "o1" / "drain.csv")} == set(slow)
    assert acc.main([s, "--class", str(tmp_path / "c.json"), "--out", str(tmp_path / "o2")]) == EXIT_REPORT_FAIL
    assert {r["node"] for r in rows(tmp_path / "o2" / "drain.csv")} == set(slow)


def test_tolerances_fleet_leaves_out_failed_and_outlying_nodes(tmp_path, capsys):
    from gpucomm.analysis import tolerances
    vals = values(k=5, slow="nid005", loss=0.5)
    extra = [case("nid002", CHECK, {"goodput_1MiB": (1.0, "GB/s"), "latency_8B": (2.0, "us")}, rep=5,
                  result="fail", phase="sanity", reason="data mismatch")]
    s = session(tmp_path / "s.json", vals, extra=extra)
    assert tolerances.main(["--fleet", s, "--class", str(tmp_path / "c.json"), "--md", str(tmp_path / "t.md")]) == 0
    assert "nid002, nid005" in capsys.readouterr().err
    doc = json.loads((tmp_path / "c.json").read_text())
    assert "nid005" not in doc["nodes"] and doc["partitions"] == ["ci:cluster"]
    v = doc["variables"][f"{CHECK}|ci:cluster|goodput_1MiB"]
    assert 0.005 < v["within"] < 0.02 and v["nodes"] == 6 and v["k"] == 5
    table = (tmp_path / "t.md").read_text()
    assert "| 6 |" in table  # six healthy nodes shaped the references
    rc = tolerances.main([str(tmp_path / "s.json"), "--judge", str(tmp_path / "missing.json")])
    assert rc == EXIT_BAD_INPUT and "missing.json" in capsys.readouterr().err


@pytest.mark.parametrize("args,says", [
    (["--alpha", "nan"], "--alpha"), (["--alpha", "2"], "--alpha"), (["--min-loss", "-0.1"], "--min-loss"),
    (["--min-loss", "nan"], "--min-loss"), (["--variables", "("], "--variables"),
    (["--variables", "nomatch"], "matches no perf variable"), (["--class", "nothere.json"], "class file"),
])
def test_a_bad_option_is_one_line_and_exit_2(acc, tmp_path, capsys, args, says):
    rc = acc.main([session(tmp_path / "s.json", values()), "--out", str(tmp_path / "o"), *args])
    err = capsys.readouterr().err.strip()
    assert rc == EXIT_BAD_INPUT and says in err and "Traceback" not in err
    assert len(err.splitlines()) <= 2  # argparse: usage + the error; ours: one line


@pytest.mark.parametrize("text", ["{", "[]", '{"runs": []}', ""])
def test_an_unreadable_session_is_one_line_and_exit_2(acc, tmp_path, capsys, text):
    (tmp_path / "bad.json").write_text(text)
    assert acc.main([str(tmp_path / "bad.json"), "--out", str(tmp_path / "o")]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "bad.json" in err
    assert acc.main([str(tmp_path / "nothere.json")]) == EXIT_BAD_INPUT


def test_sessions_of_another_system_or_class_are_refused(acc, tmp_path, capsys):
    a = session(tmp_path / "a.json", values())
    doc = json.loads((tmp_path / "a.json").read_text())
    for tc in doc["runs"][0]["testcases"]:
        tc["system"] = "other"
    (tmp_path / "b.json").write_text(json.dumps(doc))
    assert acc.main([a, str(tmp_path / "b.json"), "--out", str(tmp_path / "o")]) == EXIT_BAD_INPUT
    assert "different systems" in capsys.readouterr().err
    cls = {"gpucomm_class": 1, "partitions": ["alps:gh200"], "variables": {}}
    (tmp_path / "c.json").write_text(json.dumps(cls))
    assert acc.main([a, "--class", str(tmp_path / "c.json"), "--out", str(tmp_path / "o")]) == EXIT_BAD_INPUT
    assert "class file of alps:gh200" in capsys.readouterr().err


def test_an_earlier_verdict_is_not_overwritten_and_a_full_disk_leaves_no_file(acc, tmp_path, capsys, monkeypatch):
    s = session(tmp_path / "s.json", values())
    out = tmp_path / "o"
    assert acc.main([s, "--out", str(out)]) == EXIT_OK
    assert acc.main([s, "--out", str(out)]) == EXIT_BAD_INPUT
    assert "--force" in capsys.readouterr().err
    assert acc.main([s, "--out", str(out), "--force"]) == EXIT_OK
    full = tmp_path / "full"
    real_open = open

    def no_space(path, mode="r", *a, **kw):
        if "w" in mode and str(path).startswith(str(full)):
            fp = real_open(path, mode, *a, **kw)
            fp.write = lambda *_: (_ for _ in ()).throw(OSError(28, "No space left on device"))
            return fp
        return real_open(path, mode, *a, **kw)
    monkeypatch.setattr("builtins.open", no_space)
    assert acc.main([s, "--out", str(full)]) == EXIT_BAD_INPUT
    monkeypatch.undo()
    assert "No space left" in capsys.readouterr().err
    assert not list(full.iterdir())


def test_speed_256_nodes_k5_30_variables(tmp_path, capsys):
    """The speed benchmark's session, a quarter of it (1024 nodes: bench/results/.../40-fleet-
    verdict-synthetic): it completes, drains the slow node, and the time is printed (never judged
    against a fixed time here)."""
    from gpucomm.analysis import acceptance
    report = str(tmp_path / "s.json")
    sessions.fleet(tmp_path / "s.json", 256, 5, slow="nid00007")
    t0 = time.perf_counter()
    rc = acceptance.main([report, "--out", str(tmp_path / "o")])
    took = time.perf_counter() - t0
    with capsys.disabled():
        print(f"\ngpucomm acceptance, 256 nodes x 5 repeats x 30 variables: {took:.1f} s")
    assert rc == EXIT_REPORT_FAIL
    assert "nid00007" in {r["node"] for r in rows(tmp_path / "o" / "drain.csv")}
    assert len(rows(tmp_path / "o" / "pass.csv")) + len({r["node"] for r in rows(tmp_path / "o" / "drain.csv")}) \
        == 256


def _damaged(field, value):
    def damage(doc):
        if field == "testcases":
            doc["runs"][0]["testcases"] = value
        else:
            doc["runs"][0]["testcases"][0][field] = value
    return damage


@pytest.mark.parametrize("damage, says", [
    (_damaged("testcases", 5), "testcases is int, not a list"),
    (_damaged("perfvalues", [1]), "perfvalues is list, not dict"),
    (_damaged("display_name", 5), "display_name is int, not str"),
], ids=["testcases-5", "perfvalues-list", "display_name-number"])
def test_a_report_with_fields_of_the_wrong_type_is_one_line_and_exit_2(acc, tmp_path, capsys, damage, says):
    """Old: a TypeError traceback."""
    path = tmp_path / "s.json"
    doc = json.loads(open(session(path, values())).read())
    damage(doc)
    path.write_text(json.dumps(doc))
    assert acc.main([str(path), "--out", str(tmp_path / "o")]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith(ERROR_PREFIX) and says in err, err


def test_a_stored_session_not_found_names_the_database(acc, tmp_path, capsys, monkeypatch):
    """Old: "no such file, nor a stored session", whichever database was read."""
    monkeypatch.delenv("RFM_CONFIG_FILES", raising=False)
    monkeypatch.setenv("RFM_SQLITE_DB_FILE", str(tmp_path / "none.db"))
    monkeypatch.setattr("gpucomm.analysis.inputs.stored_sessions", lambda query: ([], None))
    assert acc.main(["0123abcd-0000", "--out", str(tmp_path / "o")]) == EXIT_BAD_INPUT
    assert f"nor a stored session in {tmp_path / 'none.db'}" in capsys.readouterr().err
    monkeypatch.delenv("RFM_SQLITE_DB_FILE")
    assert acc.main(["0123abcd-0000", "--out", str(tmp_path / "o")]) == EXIT_BAD_INPUT
    assert "ReFrame's default database (RFM_CONFIG_FILES is unset" in capsys.readouterr().err
