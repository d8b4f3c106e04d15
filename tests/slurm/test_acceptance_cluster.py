"""Acceptance of the 4 nodes of .ci/cluster-up.sh (docs/acceptance.md): ``--mode acceptance
--distribute=all`` on ci:cluster runs the host checks once on each node, each its own verdict, the
checks across nodes left out; ``gpucomm acceptance`` on that session drains nothing; with one node
made slow (a token bucket on gcn3's own loopback, which carries its two ranks' TCP traffic: a
node-keyed fault no other node sees), it names exactly that node.

Judged here on the bandwidths only, with a minimum gap of 90 %: on the CI machine's 2 cores the
4 "nodes" share the CPUs, and latencies and 1 MiB goodput of a healthy node spread by factors
between jobs (docs/ci-cluster.md); the slow node is ~100x below the others.
"""

import csv
import os
import re
import subprocess
import sys

import pytest

from reframe_helpers import REPO, reframe, report_cases

# the cluster fixture and helpers of the cluster's own tests (same module state: one worker)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_cluster import NODES, all_idle, cluster, wait_nodes  # noqa: E402,F401

pytestmark = pytest.mark.cluster

SLOW = "gcn3"
#: gcn3's loopback: 1 MiB then takes ~1 s (1 MB/s) instead of a few ms
SLOW_RATE = "8mbit"
CHECKS = "^(PingPongCheck|AllReduceCheck)%method=host"
SMALL = ["-S", "sizes=8,1M", "-S", "iters=5", "-S", "warmup=1"]
JUDGE = ["--variables", "goodput", "--min-gap", "0.9"]


def acceptance_run(env, prefix, names):
    report = prefix / "report.json"
    out = reframe("--system", "ci:cluster", "-c", "checks/", "--mode", "acceptance", "--distribute=all",
                  "-n", names, "-r", "--prefix", prefix, "--report-file", report, *SMALL, env=env, timeout=600)
    print(out.stdout[-3000:])
    return out, report


def judge(report, out_dir):
    proc = subprocess.run([sys.executable, "-m", "gpucomm", "acceptance", str(report), "--out", str(out_dir),
                           *JUDGE], capture_output=True, text=True, cwd=REPO, timeout=120)
    print(proc.stdout, proc.stderr)
    with open(out_dir / "drain.csv") as fp:
        drain = list(csv.DictReader(fp))
    with open(out_dir / "pass.csv") as fp:
        passed = list(csv.DictReader(fp))
    return proc, drain, passed


def lo_shaping(node, rate=None):
    """A token bucket on ``node``'s loopback (its ranks' traffic to each other); None: removed.
    The bucket holds more than one of the loopback's 64 KiB packets (a smaller one drops them all)."""
    base = ["ip", "netns", "exec", node, "tc", "qdisc"]
    if rate is None:
        subprocess.run(base + ["del", "dev", "lo", "root"], capture_output=True)
    else:
        subprocess.run(base + ["replace", "dev", "lo", "root", "tbf", "rate", rate, "burst", "256kb",
                               "latency", "2s"], check=True, capture_output=True)


@pytest.fixture(scope="module")
def healthy_session(cluster, tmp_path_factory):
    from machine import alone
    with alone():  # the nodes' numbers against each other: nothing else on the CPUs
        out, report = acceptance_run(cluster, tmp_path_factory.mktemp("healthy"), CHECKS)
    return out, report


@pytest.fixture(scope="module")
def slow_session(cluster, tmp_path_factory):
    from machine import alone
    try:
        lo_shaping(SLOW, SLOW_RATE)
        with alone():
            out, report = acceptance_run(cluster, tmp_path_factory.mktemp("slow"), "^PingPongCheck%method=host")
    finally:
        lo_shaping(SLOW)
    wait_nodes(all_idle, "idle")
    return out, report


def test_distribute_runs_each_check_once_per_node(healthy_session):
    out, report = healthy_session
    assert out.returncode == 0, out.stdout[-3000:]
    cases = report_cases(report)
    by_check = {}
    for c in cases:
        assert c["result"] == "pass", f"{c['display_name']}: {c['fail_reason']}"
        node = re.search(r"%\.nid=(\S+)", c["display_name"]).group(1)  # the node ReFrame pinned it to
        assert c["job_nodelist"] in ([node], ["None"]), c["job_nodelist"]
        by_check.setdefault(c["name"], []).append(node)
    assert sorted(by_check) == ["AllReduceCheck %method=host", "PingPongCheck %method=host"]
    for name, nodes in by_check.items():
        assert sorted(nodes) == NODES, (name, nodes)


def test_the_checks_across_nodes_stay_out_of_the_distributed_run(cluster, tmp_path):
    """--mode acceptance selects no multi-node check (ReFrame would pin each to one node, N times);
    --mode acceptance-network selects them, and only them."""
    lists = {}
    for mode in ("acceptance", "acceptance-network"):
        out = reframe("--system", "ci:cluster", "-c", "checks/", "-c", "checks/cluster/", "--mode", mode,
                      "--prefix", tmp_path / mode, "-l", env=cluster, timeout=300)
        assert out.returncode == 0, out.stdout[-2000:]
        lists[mode] = {ln.split()[1] for ln in out.stdout.splitlines() if ln.startswith("- ")}
    multi = {"MultiPingPongCheck", "AllToAllScalingCheck", "AllReduceScalingCheck", "HostAllToAllScalingCheck",
             "HostAllReduceScalingCheck", "NodePairMatrixCheck"}
    assert not lists["acceptance"] & multi, lists["acceptance"]
    assert {"PingPongCheck", "PairMatrixCheck", "BwCheck"} <= lists["acceptance"]
    assert "HealthCheck" not in lists["acceptance"]
    assert lists["acceptance-network"] <= multi and "NodePairMatrixCheck" in lists["acceptance-network"]


def test_a_healthy_fleet_drains_nothing(healthy_session, tmp_path):
    _, report = healthy_session
    proc, drain, passed = judge(report, tmp_path)
    assert proc.returncode == 0 and drain == [], proc.stdout
    assert sorted(r["node"] for r in passed) == NODES
    assert "scontrol" not in proc.stdout


def test_the_slow_node_and_no_other_is_drained(slow_session, tmp_path):
    out, report = slow_session
    proc, drain, passed = judge(report, tmp_path)
    assert proc.returncode != 0, proc.stdout
    assert {r["node"] for r in drain} == {SLOW}, drain
    assert sorted(r["node"] for r in passed) == [n for n in NODES if n != SLOW]
    assert f"scontrol update nodename='{SLOW}' state=drain reason=" in proc.stdout
