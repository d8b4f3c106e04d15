"""The inter-node checks on a real multi-node Slurm: the 4-node cluster of .ci/cluster-up.sh
(nodes gcn1, gcn2 on switch leaf1, gcn3, gcn4 on leaf2; the inter-switch links shaped to 50 Mbit/s),
system ci, partition cluster, host method through sbatch and srun --mpi=pmix.  And its faults: a
slurmd killed mid-job, a drained node, a degraded link.

Marker ``cluster`` (``pytest -m cluster``; ``-m 'not cluster'`` leaves them out).  Needs the
cluster (SLURM_CONF=$GPUCOMM_CLUSTER_DIR/slurm.conf, default /tmp/gpucomm-cluster); skipped
without it, unless GPUCOMM_REQUIRE_CLUSTER=1 (.ci/run), where a missing cluster is a failure.
Sizes are small: the whole module takes a few minutes on CI's 2 cores.  Its tests change the
cluster (kill a slurmd, drain a node, shape a link) and put it back afterwards (``healthy``).
"""

import json
import os
import re
import subprocess
import threading
import time
from pathlib import Path

import pytest

from reframe_helpers import REPO, clean_env, reframe, report_cases

pytestmark = pytest.mark.cluster

STATE = Path(os.environ.get("GPUCOMM_CLUSTER_DIR", "/tmp/gpucomm-cluster"))
CONF = STATE / "slurm.conf"
NODES = ["gcn1", "gcn2", "gcn3", "gcn4"]
LEAF = {"gcn1": "leaf1", "gcn2": "leaf1", "gcn3": "leaf2", "gcn4": "leaf2"}
CTL = ["bash", str(REPO / ".ci" / "cluster-ctl.sh")]
CHECKS = ["-c", "checks/internode.py", "-c", "checks/cluster/"]


def slurm(*args, timeout=20):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, SLURM_CONF=str(CONF))).stdout


def node_states():
    return dict(ln.split() for ln in slurm("sinfo", "-h", "-N", "-o", "%N %T").splitlines()
                if ln.strip())


def wait_nodes(pred, what, timeout=60):
    for _ in range(timeout):
        states = node_states()
        if pred(states):
            return states
        time.sleep(1)
    pytest.fail(f"nodes not {what} after {timeout}s: {states}")


def all_idle(states):
    """Every node idle and responding: "idle*" (slurmctld has not heard from its slurmd since it
    was started again) is given no job, and the next test's job that names it is blocked
    (ReqNodeNotAvail: a CI run's noise test after the drained-node test)."""
    return sorted(states) == NODES and all(s == "idle" for s in states.values())


@pytest.fixture(scope="module")
def cluster():
    why = None
    if not CONF.exists():
        why = f"no {CONF} (run .ci/cluster-up.sh)"
    else:
        try:
            states = node_states()
        except (OSError, subprocess.TimeoutExpired) as exc:
            states, why = {}, f"sinfo: {exc}"
        if not why and sorted(states) != NODES:
            why = f"cluster nodes are {states}, not {NODES}"
    if why:
        if os.environ.get("GPUCOMM_REQUIRE_CLUSTER") == "1":
            pytest.fail(f"GPUCOMM_REQUIRE_CLUSTER=1 but the cluster is not usable: {why}")
        pytest.skip(f"no 4-node cluster here: {why}")
    wait_nodes(all_idle, "idle")
    return clean_env(SLURM_CONF=CONF)


@pytest.fixture
def healthy(cluster):
    """The cluster env; afterwards every node idle again and every link unshaped."""
    yield cluster
    for n in NODES:
        subprocess.run([*CTL, "restore", n], capture_output=True)
        subprocess.run([*CTL, "start-slurmd", n], capture_output=True)
    slurm("scontrol", "update", f"nodename={','.join(NODES)}", "state=resume")
    wait_nodes(all_idle, "idle again", timeout=90)


def run(env, tmp_path, *args, timeout=600):
    report = tmp_path / "report.json"
    out = reframe("--system", "ci:cluster", *CHECKS, "-r", "--prefix", tmp_path,
                  "--report-file", report, *args, env=env, timeout=timeout)
    print(out.stdout[-4000:])
    return out, {c["display_name"]: c for c in report_cases(report)}


def meta(case):
    """The payload's JSON meta (output dir of a passed case, stage dir of a failed one)."""
    path = os.path.join(case["outputdir"] or "", "gpucomm_results.json")
    if not os.path.exists(path):
        path = os.path.join(case["stagedir"], "gpucomm_results.json")
    with open(path) as fp:
        return json.load(fp)["meta"]


def script(case):
    path = os.path.join(case["outputdir"] or "", "rfm_job.sh")
    if not os.path.exists(path):
        path = os.path.join(case["stagedir"], "rfm_job.sh")
    return open(path).read()


def one(cases, pattern):
    found = [c for name, c in cases.items() if re.search(pattern, name)]
    assert len(found) == 1, f"{pattern}: {list(cases)}"
    return found[0]


def test_cluster_shape(cluster):
    """4 nodes, 3 switches; every node its own host name and its place in the tree."""
    assert sorted(node_states()) == NODES
    topo = slurm("scontrol", "show", "topology")
    assert len(re.findall(r"^SwitchName=", topo, re.M)) == 3, topo
    out = slurm("srun", "-N4", "--ntasks-per-node=1", "sh", "-c",
                "echo $(hostname) $SLURM_TOPOLOGY_ADDR", timeout=60)
    got = dict(ln.split() for ln in out.splitlines())
    assert got == {n: f"top.{LEAF[n]}.{n}" for n in NODES}, out


@pytest.mark.alone  # the shaped link's rate against a leaf switch's
def test_multi_pingpong_every_placement(cluster, tmp_path):
    out, cases = run(cluster, tmp_path, "-n", "MultiPingPongCheck", "-t", "^host$",
                     "-x", "%pairs=all", "-P", "placement=same-switch,different-switch,different-group",
                     "-S", "ranks_per_node=1", "-S", "sizes=8,1M", "-S", "iters=10")
    assert out.returncode == 0, out.stdout[-3000:]
    same = one(cases, "placement=same-switch")
    diff = one(cases, "placement=different-switch")
    group = one(cases, "placement=different-group")
    assert group["result"] == "skip"
    assert "has no scheduler option for placement different-group" in out.stdout
    for case, option, distance in ((same, "#SBATCH --switches=1", "same-switch"),
                                   (diff, "#SBATCH --nodelist=gcn1,gcn3", "different-switch")):
        assert case["result"] == "pass", case["fail_reason"]
        assert option in script(case).splitlines()
        placement = meta(case)["placement"]
        assert placement["distance"] == distance and placement["source"] == "SLURM_TOPOLOGY_ADDR"
        assert placement["topology_addr"] == [f"top.{LEAF[h]}.{h}" for h in placement["hosts"]]
        assert len(set(placement["hosts"])) == 2
    # the shaped inter-switch link: at its rate, and far slower than a leaf switch at 1 MiB (the
    # references of config/references/ci.yaml say so too, through ReFrame)
    same_gp = _perf(same, "goodput_1MiB")
    diff_gp = _perf(diff, "goodput_1MiB")
    rate = shaped_rate_GBps()
    print(f"same-switch {same_gp * 1e3:.1f} MB/s, different-switch {diff_gp * 1e3:.2f} MB/s, "
          f"shaped {rate * 1e3:.2f} MB/s: {same_gp / diff_gp:.0f}x")
    assert 0.5 * rate <= diff_gp <= 1.6 * rate, (diff_gp, rate)
    assert same_gp > 5 * diff_gp, (same_gp, diff_gp)


def shaped_rate_GBps():
    """The cluster's inter-switch rate (cluster-up.sh --inter-switch-rate, its cluster.env), GB/s."""
    env = dict(ln.split("=", 1) for ln in (STATE / "cluster.env").read_text().split())
    value, unit = re.fullmatch(r"([\d.]+)([kmg]?)bit", env["RATE"].lower()).groups()
    return float(value) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[unit] / 8 / 1e9


def _perf(case, name):
    for key, val in case["perfvalues"].items():
        if key.split(":")[-1] == name:
            return val[0]
    raise KeyError(f"{name} not in {list(case['perfvalues'])}")


def test_placement_slurm_did_not_give_fails(cluster, tmp_path):
    """Same switch asked for, the node list puts the nodes on two: the check fails, naming them."""
    out, cases = run(cluster, tmp_path, "-n", "MultiPingPongCheck", "-t", "^host$",
                     "-x", "%pairs=all", "-S", "placement=same-switch", "-S", "nodelist=gcn1,gcn3",
                     "-S", "ranks_per_node=1", "-S", "sizes=8", "-S", "iters=5")
    assert out.returncode != 0
    case = one(cases, "MultiPingPongCheck")
    assert case["result"] == "fail"
    reason = case["fail_reason"]
    assert "placement same-switch asked for, but the nodes are different-switch" in reason, reason
    assert "gcn1 (top.leaf1.gcn1), gcn3 (top.leaf2.gcn3)" in reason, reason


def test_scaling_on_2_and_4_nodes(cluster, tmp_path):
    out, cases = run(cluster, tmp_path, "-n", "HostAllToAllScalingCheck|HostAllReduceScalingCheck",
                     "-S", "max_nodes=4", "-S", "ranks_per_node=1", "-S", "size=2M",
                     "-S", "iters=3", "-S", "warmup=1")
    assert out.returncode == 0, out.stdout[-3000:]
    assert len(cases) == 4
    for name, case in cases.items():
        assert case["result"] == "pass", f"{name}: {case['fail_reason']}"
        nodes = int(re.search(r"%nodes=(\d+)", name).group(1))
        m = meta(case)
        assert m["physical_nodes"] == nodes and m["nranks"] == nodes
        assert len(set(m["hosts"])) == nodes and set(m["hosts"]) <= set(NODES)
        assert f"#SBATCH --nodes={nodes}" in script(case).splitlines()
        assert _perf(case, "goodput_2MiB") > 0


def _when_running(env, name_part, action, started=None, timeout=120):
    """Run ``action(nodes)`` once a job whose name contains name_part is RUNNING (a thread):
    1.5 s later, or once its stdout has a line starting with ``started`` (e.g. the payload's
    first record: its MPI_Init is over, whose start Open MPI's ob1 does not survive a link
    shaped under it: see docs/ci-cluster.md)."""
    def stdout_of(jobid):
        m = re.search(r"StdOut=(\S+)", slurm("scontrol", "show", "job", jobid))
        return Path(m.group(1)) if m else None

    def watch():
        for _ in range(timeout * 2):
            for ln in slurm("squeue", "-h", "-o", "%i %j %T %N").splitlines():
                parts = ln.split()
                if len(parts) == 4 and name_part in parts[1] and parts[2] == "RUNNING":
                    if started is None:
                        time.sleep(1.5)  # the payload's start-up
                    else:
                        out = stdout_of(parts[0])
                        for _ in range(timeout * 10):
                            if out and out.exists() and any(
                                    ln.startswith(started) for ln in out.read_text().splitlines()):
                                break
                            time.sleep(0.1)
                    action(parts[3])
                    return
            time.sleep(0.5)
    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.mark.alone  # every other pair must stay within its reference
def test_health_mode_names_a_link_degraded_during_the_run(healthy, tmp_path):
    """The nightly run (``--mode health``: the checks tagged health, here the node pair matrix)
    while gcn4's own link drops to 16 Mbit/s (2 MB/s, below both pair classes' lower bounds): the
    verdict names the slow node pairs, every one with gcn4, and the pairs of the other nodes stay
    within their references.  3 iterations after 1 warm-up: each 256 KiB pair with gcn4 then
    takes about a second instead of three."""
    thread = _when_running(healthy, "NodePairMatrix",
                           lambda _: subprocess.run([*CTL, "degrade", "gcn4", "16mbit"], check=True),
                           started="GPUCOMM-RESULT")
    report = tmp_path / "report.json"
    # every pair alone (pair_scope all): in the rounds, a pair across the shaped link shares it
    # with the other round's pair, and the slowed pairs would hide within that share's bounds
    out = reframe("--system", "ci:cluster", "--mode", "health", "-c", "checks/cluster/", "-r",
                  "--prefix", tmp_path, "--report-file", report, "-S", "iters=3",
                  "-S", "warmup=1", "-S", "pair_scope=all", env=healthy, timeout=600)
    print(out.stdout[-4000:])
    thread.join()
    cases = {c["display_name"]: c for c in report_cases(report)}
    case = one(cases, "NodePairMatrixCheck")  # the only health check of the cluster's checks
    assert out.returncode != 0 and case["result"] == "fail", out.stdout[-3000:]
    assert case["fail_phase"] == "performance", case["fail_reason"]
    reason = case["fail_reason"]
    failing = set(re.findall(r"\buni_256KiB_(gcn\d)-(gcn\d)", reason))
    assert failing, reason
    assert all("gcn4" in pair for pair in failing), reason
    # the ordered pairs gcn4 sends in are measured last (rank 3), well after the link degraded
    assert {("gcn4", n) for n in NODES if n != "gcn4"} <= failing, reason
    print(f"slow node pairs: {sorted(failing)}")


def test_killed_slurmd_fails_the_job_and_the_next_runs_elsewhere(healthy, tmp_path):
    killed = []

    def kill(nodes):
        killed.append("gcn3")
        subprocess.run([*CTL, "kill-slurmd", "gcn3"], check=True)

    thread = _when_running(healthy, "MultiPingPong", kill)
    # different switch = gcn1 + gcn3; long enough (4 MiB over the shaped link) to be killed in
    out, cases = run(healthy, tmp_path, "-n", "MultiPingPongCheck", "-t", "^host$", "-x", "%pairs=all",
                     "-S", "placement=different-switch", "-S", "ranks_per_node=1",
                     "-S", "sizes=4M", "-S", "iters=100", timeout=300)
    thread.join()
    assert killed
    case = one(cases, "MultiPingPongCheck")
    assert case["result"] == "fail"
    print("fail reason:", case["fail_reason"])
    assert "payload did not finish: Slurm: node failure on gcn3" in case["fail_reason"]
    job = slurm("scontrol", "show", "job", str(case["jobid"]))
    assert "JobState=NODE_FAIL" in job, job
    states = wait_nodes(lambda s: s.get("gcn3", "").rstrip("*") == "down", "gcn3 down")
    # the next job: 3 nodes, on the remaining ones
    out, cases = run(healthy, tmp_path / "next", "-n", "NodePairMatrixCheck", "-S", "num_nodes=3",
                     "-S", "sizes=8,64K", "-S", "perf_sizes=256K", "-S", "iters=3")
    case = one(cases, "NodePairMatrixCheck")
    assert case["result"] == "pass", case["fail_reason"]
    assert sorted(meta(case)["hosts"]) == ["gcn1", "gcn2", "gcn4"], states


def test_drained_node(healthy, tmp_path):
    """A job that needs the drained node is cancelled with Slurm's reason (ReFrame's rule for a
    blocked job); one that does not runs."""
    slurm("scontrol", "update", "nodename=gcn3", "state=drain", "reason=gpucomm-test")
    wait_nodes(lambda s: s.get("gcn3", "").startswith("drain"), "gcn3 drained")
    out, cases = run(healthy, tmp_path, "-n", "MultiPingPongCheck", "-t", "^host$", "-x", "%pairs=all",
                     "-P", "placement=same-switch,different-switch", "-S", "ranks_per_node=1",
                     "-S", "sizes=8", "-S", "iters=5")
    blocked = one(cases, "placement=different-switch")
    assert blocked["result"] == "fail"
    assert "blocked due to reason: ReqNodeNotAvail" in blocked["fail_reason"], blocked["fail_reason"]
    assert "gcn3" in blocked["fail_reason"], blocked["fail_reason"]
    fine = one(cases, "placement=same-switch")
    assert fine["result"] == "pass", fine["fail_reason"]
    assert "gcn3" not in meta(fine)["hosts"]
