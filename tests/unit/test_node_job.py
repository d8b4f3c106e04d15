"""The per-node acceptance job (rfm.nodejob) as gpucomm acceptance reads it: one test case per
node and repeat, unfolded into one per inner check (analysis.inputs.node_job_rows); and the
plan said before submitting, refused over a partition's limits (rfm.plan)."""

import json

import pytest

from gpucomm.analysis import acceptance
from gpucomm.contract import NODE_CHECK_SEP, NODE_CHECKS_FIELD, PRECISION_FIELD

pytestmark = pytest.mark.unit

PP, AR = "PingPongCheck %method=host", "AllReduceCheck %method=host"
NODES = ["n1", "n2", "n3", "n4", "n5", "n6"]


def node_case(node, rep, status, values):
    """A node job's test case as ReFrame reports it: its inner checks' status and perf values."""
    perf = {f"sys:part:{inner}{NODE_CHECK_SEP}{var}": [v, 0, None, None, unit, "pass"]
            for inner, var, v, unit in values}
    failed = any(not s.startswith(("pass", "skip")) for s in status.values())
    return {"name": "NodeAcceptanceCheck", "display_name": f"NodeAcceptanceCheck %.repeat_no={rep} "
            f"%.part=sys:part %.nid={node}", "system": "sys", "partition": "part", "environ": "env",
            "result": "fail" if failed else "pass", "fail_phase": "performance" if failed else None,
            "fail_reason": "inner checks failed" if failed else None, "job_nodelist": [node],
            "perfvalues": perf, NODE_CHECKS_FIELD: status, "inner_names": [PP, AR]}


def session(tmp_path, broken=None):
    """6 nodes x 4 repeats; ``broken``: {(node, repeat): status of the inner checks}."""
    cases = []
    for i, node in enumerate(NODES):
        for rep in range(4):
            status = (broken or {}).get((node, rep), {PP: "pass", AR: "pass"})
            wobble = 1 + 0.01 * ((i * 7 + rep * 3) % 5)
            values = [(inner, var, v * wobble, unit) for inner, var, v, unit in
                      ((PP, "latency_8B", 2.0, "us"), (PP, "goodput_1MiB", 10.0, "GB/s"),
                       (AR, "latency_8B", 3.0, "us"), (AR, "goodput_1MiB", 5.0, "GB/s"))
                      if status.get(inner) == "pass"]
            cases.append(node_case(node, rep, status, values))
    path = tmp_path / "node-job.json"
    path.write_text(json.dumps({"session_info": {"uuid": "s1", "time_end_unix": 1.0, "cmdline": "reframe"},
                                "runs": [{"testcases": cases}]}))
    return str(path)


def test_a_node_job_reads_as_its_inner_checks(tmp_path):
    """Each node job case is two test cases, named by the inner checks, on its node and repeat,
    each with its own perf variables."""
    cases, perf = acceptance.read_sessions([session(tmp_path)])
    assert sorted(set(cases["test"])) == [AR, PP]
    assert len(cases) == len(NODES) * 4 * 2 and set(cases["node"]) == set(NODES)
    assert sorted(set(cases["repeat"])) == [0, 1, 2, 3]
    assert set(cases["result"]) == {"pass"}
    assert sorted(set(zip(perf["test"], perf["var"]))) == [(AR, "goodput_1MiB"), (AR, "latency_8B"),
                                                           (PP, "goodput_1MiB"), (PP, "latency_8B")]
    verdict = acceptance.evaluate(cases, perf)
    assert verdict.drain == [] and {r["node"] for r in verdict.passed} == set(NODES)


def test_an_inner_check_failed_is_that_checks_failure_on_that_node(tmp_path):
    """AllReduce failed inside n2's job in one repeat: n2 drained for AllReduce, named, with its
    reason; PingPong of the same job still judged; the other nodes unaffected."""
    broken = {("n2", 1): {PP: "pass", AR: "fail: data mismatch at 1 MiB on rank 1"}}
    cases, perf = acceptance.read_sessions([session(tmp_path, broken)])
    verdict = acceptance.evaluate(cases, perf)
    rows = [r for r in verdict.drain if r["node"] == "n2"]
    assert [r["check"] for r in rows] == [AR], verdict.drain
    assert "data mismatch at 1 MiB" in rows[0]["reason"]
    assert {r["node"] for r in verdict.drain} == {"n2"}
    assert len(perf[(perf["node"] == "n2") & (perf["test"] == PP)]) == 4 * 2  # its ping-pong reported


def test_a_node_that_died_has_no_result_for_the_checks_after(tmp_path):
    """n3 died after PingPong in repeat 2 (the job's status has no AllReduce line, as the node job
    writes it): AllReduce is "no result" for n3, drained; PingPong's value stands; others pass."""
    broken = {("n3", 2): {PP: "pass", AR: "no result: the node job ended before it (at AllReduceCheck "
                                         "%method=host: the node died or the job's time limit)"}}
    cases, perf = acceptance.read_sessions([session(tmp_path, broken)])
    died = cases[(cases["node"] == "n3") & (cases["repeat"] == 2)].set_index("test")["result"].to_dict()
    assert died == {PP: "pass", AR: "no result"}
    verdict = acceptance.evaluate(cases, perf)
    assert {(r["node"], r["check"]) for r in verdict.drain} == {("n3", AR)}
    assert "no result for AllReduceCheck %method=host" in verdict.drain[0]["reason"]


def test_a_job_without_statuses_makes_every_inner_check_no_result(tmp_path):
    """A node job that never judged its checks (its status empty, the job failed): every inner
    check of that repeat is "no result" with the job's reason."""
    path = session(tmp_path)
    doc = json.loads(open(path).read())
    case = doc["runs"][0]["testcases"][0]
    case.update({NODE_CHECKS_FIELD: {}, "perfvalues": {}, "result": "fail", "fail_phase": "run",
                 "fail_reason": "job cancelled: NODE_FAIL"})
    open(path, "w").write(json.dumps(doc))
    cases, _ = acceptance.read_sessions([path])
    mine = cases[(cases["node"] == "n1") & (cases["repeat"] == 0)]
    assert set(mine["result"]) == {"no result"} and set(mine["fail_reason"]) == {"job cancelled: NODE_FAIL"}


def test_an_inner_checks_precision_reaches_its_perf_rows(tmp_path):
    """The node job reports its inner checks' precision records under "<inner>:<variable>"
    (rfm.nodejob): each unfolded perf row has its own (the verdict's run_se), as a check of its
    own would; a variable without one is "precision unknown"."""
    path = session(tmp_path)
    doc = json.loads(open(path).read())
    for case in doc["runs"][0]["testcases"]:
        case[PRECISION_FIELD] = {f"{PP}{NODE_CHECK_SEP}latency_8B": {"rel_se": 0.02, "samples": 10},
                                 f"{AR}{NODE_CHECK_SEP}goodput_1MiB": {"rel_se": 0.05, "samples": 10}}
    open(path, "w").write(json.dumps(doc))
    _, perf = acceptance.read_sessions([path])
    se = perf.groupby(["test", "var"])["rel_se"].agg(lambda s: sorted(set(s.dropna())))
    assert se[(PP, "latency_8B")] == [0.02] and se[(AR, "goodput_1MiB")] == [0.05]
    assert se[(PP, "goodput_1MiB")] == [] and se[(AR, "latency_8B")] == []


def test_inner_precision_is_the_inner_checks_own_record():
    """rfm.nodejob.inner_precision runs the inner check's own precision hook where its output is:
    its record, or {} where the check keeps none or its record is damaged."""
    from gpucomm.rfm.nodejob import inner_precision

    class Kept:
        precision: dict = {}

        def record_precision(self):
            self.precision = {"latency_8B": {"rel_se": 0.01}}

    class Damaged(Kept):
        def record_precision(self):
            raise ValueError("a damaged line")

    assert inner_precision(Kept()) == {"latency_8B": {"rel_se": 0.01}}
    assert inner_precision(Damaged()) == {} and inner_precision(object()) == {}


def test_inner_failures_fail_the_job_in_sanity_only_where_performance_is_left_out(monkeypatch):
    """--skip-performance-check leaves out the performance hook that fails a node job for its
    inner checks: the sanity says the same reason then, and only then (values are kept otherwise)."""
    from reframe.core.exceptions import SanityError

    from gpucomm.rfm import nodejob

    class Job:
        node_checks: dict = {}

        def __init__(self, status):
            self.status = status

        def judge_inner_checks(self):
            self.node_checks = self.status
            return True

    bad = Job({PP: "pass", AR: "fail: sanity"})
    assert nodejob.inner_failures(bad.status).startswith("1 of 2 inner checks failed")
    assert nodejob.inner_failures({PP: "pass", AR: "skip: no GPU"}) == ""
    monkeypatch.setattr(nodejob.sys, "argv", ["reframe", "-r"])
    assert nodejob.judged(bad).evaluate() is True
    monkeypatch.setattr(nodejob.sys, "argv", ["reframe", "-r", nodejob.SKIP_PERFORMANCE_OPTION])
    with pytest.raises(SanityError, match="AllReduceCheck %method=host: fail: sanity"):
        nodejob.judged(bad).evaluate()
    assert nodejob.judged(Job({PP: "pass"})).evaluate() is True


# -- the plan before submitting (rfm.plan) -------------------------------------------------------

def test_plan_counts_jobs_node_hours_and_wall_time():
    from gpucomm.rfm import plan
    plan._CASES.clear()
    for node in range(8):
        for rep in (None, 0, 1, 2, 3, 4):  # the distributed case before --repeat, then its 5 repeats
            plan.tally("s:p", "NodeAcceptanceCheck", "NodeAcceptanceCheck", (f"n{node}",), rep, None, 1)
    jobs, node_h, wall, longest, largest = plan.plan("s:p", 10, time_s=7200)
    assert (jobs, node_h, longest, largest) == (40, 80.0, 7200, 1) and wall == 40 * 7200 / 10
    line = plan.plan_line("s:p", 10, jobs, node_h, wall, longest)
    assert line.startswith("acceptance plan for s:p: 40 job(s), 80 node-hours") and "8 h 00 min at max_jobs 10" in line
    plan._CASES.clear()


def test_a_job_over_the_partitions_limits_is_refused_naming_it():
    from gpucomm.constants import Extras
    from gpucomm.rfm import plan
    assert plan.parse_time("10m") == 600 and plan.parse_time("1h30m") == 5400 and plan.parse_time("0:10:0") == 600
    line = plan.over_limits("leonardo:booster", {Extras.MAX_TIME: "30m"}, 36300, 1, "NodeAcceptanceCheck")
    assert line == ("refused before submitting: NodeAcceptanceCheck's time limit 10 h 05 min is over "
                    "leonardo:booster's longest job, 30 min (extras['max_time'], config/systems/): give "
                    "-S NodeAcceptanceCheck.time_limit=... (or fewer checks: -S NodeAcceptanceCheck.checks=REGEX)")
    assert "over s:p's largest job, 2 nodes" in plan.over_limits("s:p", {Extras.MAX_NODES: 2}, 60, 4, "X")
    assert plan.over_limits("s:p", {Extras.MAX_TIME: "24h", Extras.MAX_NODES: 4}, 36300, 1, "X") is None
