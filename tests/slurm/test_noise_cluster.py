"""The noise study (checks/noise.py) on the 4-node cluster of .ci/cluster-up.sh: gcn1, gcn2 on
leaf1, gcn3, gcn4 on leaf2, the inter-switch links shaped to 50 Mbit/s.

* shared-link: the victim's ping-pong across the shaped link (gcn1-gcn3) while the aggressor
  streams between gcn2 and gcn4 over the same link: at least 2x slower at the large size;
* apart: the victim inside leaf1 (gcn1-gcn2), the same aggressor inside leaf2: below 1.2x.
Both through ReFrame, with the ratio's references of config/references/ci.yaml.  The aggressor
is paced (4 MB/s per rank, 2 ranks per node: 8 MB/s a direction, more than the 6.25 MB/s link)
so that it saturates the shaped link yet leaves the 2 CPUs that all four "nodes" share to the
victim where it does not cross it.  Up to 20000 iterations per size within a 2 s budget (the
256 KiB median inside a switch then spans over a second, not a few ms a passing burst of other
work could fill; no other test runs meanwhile: tests/machine.py), 10 warm-up iterations (the default, a tenth of the
iterations, would be minutes across the shaped link); --max-retries=2: a job that other work on
the 2 CPUs disturbed is run again (ReFrame's own retry; the report keeps every attempt).  An
aggressor step that is not ready within 12 s (its start-up normally takes a few: a step on 2 of
the job's 4 nodes sometimes hangs in Slurm's PMIx ring fence here) is started again by the job.

Marker ``cluster``, as test_cluster.py (skipped without the cluster unless
GPUCOMM_REQUIRE_CLUSTER=1).
"""

import json
import os

import pytest

import machine
from reframe_helpers import reframe
from test_cluster import cluster  # noqa: F401 - the module-scoped fixture

# the layouts' run may be retried twice (--max-retries=2), each a few minutes at worst
pytestmark = [pytest.mark.cluster, pytest.mark.timeout(900)]

LARGE = "256KiB"
#: what the noise mode runs here: host ping-pong, 8 B and 256 KiB, a paced streams aggressor
NOISE = ["--system", "ci:cluster", "-c", "checks/noise.py", "--mode", "noise",
         "-S", "large_size=256K", "-S", "aggressor_size=1M", "-S", "aggressor_bandwidth=0.004",
         "-S", "iters=20000", "-S", "warmup=10", "-S", "budget=2", "-S", "ready_timeout=12"]


def run_noise(env, prefix, *args):
    report = prefix / "report.json"
    out = reframe(*NOISE, "-r", "--prefix", prefix, "--report-file", report, *args, env=env,
                  timeout=900)
    print(out.stdout[-4000:])
    with open(report) as fp:  # every attempt: the last one of each test case counts
        runs = json.load(fp)["runs"]
    return out, {c["display_name"]: c for run in runs for c in run["testcases"]}


def perf(case, name):
    return next(v[0] for k, v in case["perfvalues"].items() if k.split(":")[-1] == name)


def results(case, name):
    with open(os.path.join(case["outputdir"] or case["stagedir"], name)) as fp:
        return json.load(fp)


@pytest.fixture(scope="module")
def layouts(cluster, tmp_path_factory):  # noqa: F811
    with machine.alone():  # the ratios are timings: no other test's ranks on the 2 CPUs meanwhile
        out, cases = run_noise(cluster, tmp_path_factory.mktemp("noise"), "--max-retries=2",
                               "-n", "NoiseCheck%method=host%victim=pingpong%layout=(shared-link|apart)")
    by_layout = {c["layout"]: c for c in cases.values()}
    assert sorted(by_layout) == ["apart", "shared-link"], list(cases)
    return out, by_layout


def _common(case, victim_hosts, aggressor_hosts):
    assert case["result"] == "pass", case["fail_reason"]
    quiet, noisy = results(case, "gpucomm_quiet.json"), results(case, "gpucomm_noisy.json")
    aggressor = results(case, "gpucomm_aggressor.json")
    for doc in (quiet, noisy):
        assert doc["meta"]["placement"]["hosts"] == victim_hosts
        assert doc["meta"]["placement"]["source"] == "SLURM_TOPOLOGY_ADDR"
    assert sorted(set(aggressor["meta"]["hosts"])) == aggressor_hosts
    (rec,) = aggressor["results"]
    assert rec["ended"] == "stop-file" and rec["validated"] and rec["bytes_moved"] > 0
    assert perf(case, "aggressor_GBps") > 0


@pytest.mark.alone  # (its fixture measures alone; the mark hands it out early)
def test_victim_across_the_congested_link_is_slowed(layouts):
    _, cases = layouts
    case = cases["shared-link"]
    _common(case, ["gcn1", "gcn3"], ["gcn2", "gcn4"])
    slowdown = perf(case, f"victim_slowdown_{LARGE}")
    assert slowdown >= 2.0, slowdown
    # the reference on the ratio is ReFrame's own check (config/references/ci.yaml)
    ref = case["perfvalues"][f"ci:cluster:victim_slowdown_{LARGE}"]
    assert ref[1:4] == [2.0, 0.0, None], ref


@pytest.mark.alone
def test_victim_away_from_the_aggressor_is_not(layouts):
    _, cases = layouts
    case = cases["apart"]
    _common(case, ["gcn1", "gcn2"], ["gcn3", "gcn4"])
    slowdown = perf(case, f"victim_slowdown_{LARGE}")
    assert slowdown < 1.2, slowdown
    ref = case["perfvalues"][f"ci:cluster:victim_slowdown_{LARGE}"]
    assert ref[1:4] == [1.0, None, 0.2], ref


def test_a_layout_slurm_did_not_give_fails(cluster, tmp_path):  # noqa: F811
    """shared-link asked for, the victim's nodes given inside one switch: the check fails,
    naming the nodes (small and short: no timing here)."""
    out, cases = run_noise(cluster, tmp_path, "-n", "NoiseCheck%method=host%victim=pingpong%layout=shared-link",
                           "-S", "victim_nodelist=gcn1,gcn2", "-S", "aggressor_nodelist=gcn3,gcn4",
                           "-S", "large_size=1K", "-S", "aggressor_size=1K", "-S", "iters=20")
    (case,) = cases.values()
    assert case["result"] == "fail" and case["fail_phase"] == "sanity"
    assert "the victim's nodes should be different-switch, they are same-switch" in case["fail_reason"]
    assert "gcn1 (top.leaf1.gcn1), gcn2 (top.leaf1.gcn2)" in case["fail_reason"]
