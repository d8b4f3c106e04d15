"""The library behind the multi-node cluster's checks (checks/cluster/, partition ci:cluster),
without the cluster: the node pair matrix's rule and names, references found from a
subdirectory of checks/, a placement Slurm should have told, Slurm's reason for a job it ended.
The runs on the real 4-node cluster are tests/slurm/test_cluster.py."""

import json
from types import SimpleNamespace

import pytest
import reframe.utility.sanity as sn
from reframe.core.exceptions import SanityError, SkipTestError

from gpucomm.rfm import PairMatrixBase
from gpucomm.rfm.base import references_dir
from gpucomm.rfm.sanity import finished_run, not_finished_reason, placement_ok
from reframe_helpers import REPO, clean_env, job_script, reframe, report_cases

#: the first line of the slurm.conf that .ci/cluster-up.sh writes (config/systems/ci.py)
CLUSTER_MARK = "# written by gpucomm .ci/cluster-up.sh"


def test_references_dir_is_the_repositorys_from_any_checks_subdirectory(tmp_path):
    assert references_dir(REPO / "checks") == str(REPO / "config" / "references")
    assert references_dir(REPO / "checks" / "cluster") == str(REPO / "config" / "references")
    assert references_dir(tmp_path) is None


def test_node_pairs_are_named_by_their_nodes_and_classed_by_switch_distance():
    check = SimpleNamespace(current_partition=SimpleNamespace(extras={}))
    hosts = ["gcn1", "gcn2", "gcn3", "gcn4"]
    addrs = {h: f"top.leaf{1 + i // 2}.{h}" for i, h in enumerate(hosts)}
    assert PairMatrixBase.pair_name(check, [3, 0], hosts) == "gcn4-gcn1"
    assert PairMatrixBase.pair_name(check, [3, 0]) == "3-0"
    assert PairMatrixBase.class_of(check, [0, 1], (hosts, addrs)) == "same-switch"
    assert PairMatrixBase.class_of(check, [1, 2], (hosts, addrs)) == "different-switch"
    # without Slurm's topology: the partition's classes by rank, as on one node
    check.current_partition.extras = {"pair_classes": {"fast": ["0-1"], "default": "slow"}}
    assert PairMatrixBase.class_of(check, [1, 0], (hosts, {})) == "fast"
    assert PairMatrixBase.class_of(check, [1, 2]) == "slow"


def _results(tmp_path):
    path = tmp_path / "gpucomm_results.json"
    path.write_text(json.dumps({"meta": {"placement": {
        "hosts": ["gcn1", "gcn3"], "topology_addr": [None, None], "xname": [None, None],
        "distance": "unknown", "source": "no SLURM_TOPOLOGY_ADDR"}}}))
    return str(path)


def test_unknown_placement_fails_where_slurm_reports_the_topology(tmp_path):
    with pytest.raises(SkipTestError):
        sn.evaluate(placement_ok(_results(tmp_path), "same-switch"))
    with pytest.raises(SanityError, match=r"cannot confirm it .no SLURM_TOPOLOGY_ADDR. on a "
                                          r"partition whose Slurm reports its topology"):
        sn.evaluate(placement_ok(_results(tmp_path), "same-switch", "tree"))


NODE_FAILURE = """srun: error: Node failure on gcn3
srun: Job step aborted: Waiting up to 7 seconds for job step to finish.
slurmstepd-gcn1: error: *** STEP 17.0 ON gcn1 CANCELLED AT 2026-11-30T20:21:48 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***
srun: error: gcn1: task 0: Terminated
"""


def test_a_job_slurm_ended_fails_with_slurms_reason(tmp_path):
    out, err = tmp_path / "out", tmp_path / "err"
    out.write_text("# gpucomm 0.1.0 multi-pingpong method=host\n")
    err.write_text(NODE_FAILURE)
    with pytest.raises(SanityError, match="payload did not finish: Slurm: node failure on gcn3"):
        finished_run(str(out), str(err))
    err.write_text("slurmstepd-gcn1: error: *** JOB 17 ON gcn1 CANCELLED AT 2026-11-30T20:21:48 "
                   "DUE TO TIME LIMIT ***\ngpucomm: error: rank 1 stopped answering\n")
    assert not_finished_reason(str(err)) == ("Slurm: job 17 on gcn1 cancelled due to time limit; "
                                      "rank 1 stopped answering")
    err.write_text("[gcn4:19752] Signal: Segmentation fault (11)\n"
                   "srun: error: gcn4: task 3: Segmentation fault\n"
                   "slurmstepd-gcn1: error: *** STEP 34.0 ON gcn1 CANCELLED AT 2026-11-30T20:27:51 ***\n"
                   "srun: error: gcn1: task 0: Killed\n")
    assert not_finished_reason(str(err)) == "Slurm: task 3 on gcn4: segmentation fault"
    err.write_text("")
    assert not_finished_reason(str(err)).startswith("no GPUCOMM-DONE line")


@pytest.fixture(scope="module")
def cluster_dry_run(tmp_path_factory):
    """A dry run of the cluster's checks on ci:cluster (the partition that SLURM_CONF selects)."""
    tmp = tmp_path_factory.mktemp("cluster-dry")
    conf = tmp / "slurm.conf"
    conf.write_text(CLUSTER_MARK + "\n")
    report = tmp / "report.json"
    run = reframe("--system", "ci:cluster", "-c", "checks/cluster/", "-c", "checks/pairmatrix.py",
                  "-S", "max_nodes=4", "-S", "PairMatrixCheck.num_nodes=2",
                  "-S", "PairMatrixCheck.ranks_per_node=2", "--dry-run", "--prefix", tmp,
                  "--report-file", report, env=clean_env(SLURM_CONF=conf))
    assert run.returncode == 0, run.stdout[-3000:]
    return run, {c["display_name"]: c for c in report_cases(report)}


def test_node_pair_matrix_is_one_rank_per_node_with_its_references(cluster_dry_run):
    run, cases = cluster_dry_run
    (case,) = [c for n, c in cases.items() if n.startswith("NodePairMatrixCheck")]
    script = job_script(case).splitlines()
    assert "#SBATCH --nodes=4" in script and "#SBATCH --ntasks-per-node=1" in script
    assert "#SBATCH --partition=cluster" in script
    # config/references/ci.yaml found from checks/cluster/ (no "no reference file" note)
    assert "no reference" not in case["descr"], case["descr"]
    assert "health" in case["tags"]


def test_pair_matrix_over_nodes_with_several_ranks_each_skips_saying_why(cluster_dry_run):
    run, cases = cluster_dry_run
    (case,) = [c for n, c in cases.items() if n.startswith("PairMatrixCheck")]
    assert case["result"] == "skip"
    assert "one node, or of nodes with one rank each" in run.stdout


def test_host_scaling_checks_on_2_and_4_nodes(cluster_dry_run):
    _, cases = cluster_dry_run
    scaling = {n: c for n, c in cases.items() if "ScalingCheck" in n}
    assert sorted(scaling) == sorted(f"Host{op}ScalingCheck %method=host %nodes={n}"
                                     for op in ("AllToAll", "AllReduce") for n in (2, 4))
    for name, case in scaling.items():
        nodes = name.rsplit("=", 1)[1]
        assert f"#SBATCH --nodes={nodes}" in job_script(case).splitlines()
