"""The host-MPI checks through a real Slurm: sbatch, srun --mpi=pmix, squeue (system `ci`);
the multi ping-pong too, its two "nodes" emulated on the cluster's one node (rank groups).

Needs the one-node cluster of .ci/slurm-up.sh; skipped without it, unless GPUCOMM_REQUIRE_SLURM=1
(CI), where a missing Slurm is a failure.
"""

import json
import os
import re
import shutil
import subprocess

import pytest

from reframe_helpers import NOT_NATIVE, clean_env, reframe, report_cases


def _slurm_state():
    """The state of node localhost ('idle', 'mixed', ...) or why there is none."""
    if not shutil.which("sinfo"):
        return None, "sinfo not found (run .ci/slurm-up.sh)"
    try:
        out = subprocess.run(["sinfo", "-h", "-n", "localhost", "-o", "%T"], capture_output=True,
                             text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return None, "sinfo timed out: slurmctld is not answering"
    state = out.stdout.strip()
    if out.returncode or not state:
        return None, f"no Slurm node localhost ({(out.stderr or out.stdout).strip()[:200]})"
    return state, None


@pytest.fixture(scope="module")
def slurm():
    state, why = _slurm_state()
    if state is None or state.rstrip("*") not in ("idle", "mixed", "allocated", "completing"):
        why = why or f"node localhost is {state}"
        if os.environ.get("GPUCOMM_REQUIRE_SLURM") == "1":
            pytest.fail(f"GPUCOMM_REQUIRE_SLURM=1 but Slurm is not usable: {why}")
        pytest.skip(f"no Slurm here: {why}")
    return state


def test_host_checks_pass_through_sbatch(slurm, tmp_path):
    report = tmp_path / "report.json"
    # the one node has 2 CPUs: the multi ping-pong's 2 "nodes" x 1 rank
    mpp = ["-S", "MultiPingPongCheck.emulate_nodes=y", "-S", "MultiPingPongCheck.ranks_per_node=1"]
    run = reframe("--system", "ci", "-c", "checks/", "-t", "^host$", *NOT_NATIVE, "-r", *mpp,
                  "-S", "sizes=8,1K,1M", "-S", "iters=20", "--prefix", tmp_path,
                  "--report-file", report, env=clean_env(), timeout=900)
    print(run.stdout[-3000:])
    assert run.returncode == 0, run.stdout[-4000:]
    cases = report_cases(report)
    assert {c["name"].split()[0] for c in cases} == {"PingPongCheck", "AllReduceCheck",
                                                     "AllToAllCheck", "MultiPingPongCheck",
                                                     "PairMatrixCheck", "BwCheck"}
    for case in cases:
        name = case["display_name"]
        assert case["result"] == "pass", f"{name}: {case['fail_reason']}"
        assert case["system"] == "ci" and case["scheduler"] == "squeue"
        assert re.fullmatch(r"\d+", str(case["jobid"])), f"{name}: no Slurm job id"
        script = open(os.path.join(case["outputdir"], "rfm_job.sh")).read()
        print(f"--- sbatch script of {name} (Slurm job {case['jobid']}) ---\n{script}")
        assert "#SBATCH --partition=ci" in script.splitlines()
        assert "#SBATCH --ntasks=2" in script.splitlines()
        srun = [ln for ln in script.splitlines() if ln.startswith("srun ")]
        assert len(srun) == 1 and srun[0].startswith("srun --mpi=pmix ")
        with open(os.path.join(case["outputdir"], "gpucomm_results.json")) as fp:
            meta = json.load(fp)["meta"]
        assert meta["nranks"] == 2 and "Open MPI" in meta["mpi"]
        if case["op"] == "multi-pingpong":  # node A = rank 0, node B = rank 1, on localhost
            assert "#SBATCH --nodes=1" in script.splitlines() and "--switches" not in script
            assert srun[0].endswith("--ranks-per-node 1")
            assert meta["node_of_rank"] == [0, 1] and meta["pairs"] == 1
            assert meta["placement"]["hosts"] == [meta["hosts"][0]]
        # the batch system ran it: a batch job (sbatch) that completed on node localhost
        job = subprocess.run(["scontrol", "show", "job", str(case["jobid"])],
                             capture_output=True, text=True, timeout=20).stdout
        if job:  # completed jobs stay visible for MinJobAge (60 s)
            assert "JobState=COMPLETED" in job and "BatchFlag=1" in job, job
            assert "NodeList=localhost" in job, job
