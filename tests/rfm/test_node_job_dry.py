"""The per-node acceptance job (--mode acceptance-node, rfm.nodejob) in dry runs over the Slurm
stand-in: one job per node of the reservation, one launch per inner check in its script, each in
its own folder with its own output files; over a partition's longest job, refused before anything
is submitted (rfm.plan)."""

import re

from reframe_helpers import clean_env, job_script, reframe
from test_first_run import ACCOUNT, STANDIN, VENV_PYTHON

ARGS = ("-c", "checks/", "--mode", "acceptance-node", "--distribute=avail", "-J", "reservation=gpucomm-new",
        "--dry-run")


def test_node_job_has_one_launch_per_inner_check(tmp_path):
    """Alps, the stand-in's reservation (nid001, nid002 available): one job per node, whose script
    holds one block per inner check, each a launch of that check's own command line with its
    status line after it, the skipped ones named; the plan said before submitting."""
    report = tmp_path / "report.json"
    out = reframe("--system", "alps", *ARGS, "--prefix", tmp_path, "--report-file", report,
                  env=clean_env(SBATCH_ACCOUNT=ACCOUNT, GPUCOMM_PYTHON=VENV_PYTHON, **STANDIN))
    assert out.returncode == 0, out.stdout[-3000:]
    (plan,) = [ln for ln in out.stdout.splitlines() if ln.startswith("acceptance plan for alps:gh200")]
    assert plan.startswith("acceptance plan for alps:gh200: 2 job(s), ") and "at max_jobs 100" in plan
    from reframe_helpers import report_cases
    cases = report_cases(report)
    assert sorted(c["display_name"].split(" %.nid=")[1] for c in cases) == ["nid001", "nid002"]
    script = job_script(cases[0])
    lines = script.splitlines()
    assert "#SBATCH --nodelist=" + cases[0]["display_name"].split(" %.nid=")[1] in lines
    assert "#SBATCH --reservation=gpucomm-new" in lines and "#SBATCH --exclusive" in lines
    blocks = re.findall(r"^# (\d+): (.+)$", script, re.M)
    launches = [ln for ln in lines if ln.startswith("  srun ")]
    status = [ln for ln in lines if ln.startswith('echo "GPUCOMM-NODE-CHECK ')]
    assert len(blocks) == len(status) == len(launches) + 1 > 50  # NodeStateCheck: no launcher
    names = [n for _, n in blocks]
    assert "PingPongCheck %method=ccl" in names and "NodeStateCheck" in names
    assert names == [n for n in cases[0]["inner_names"] if not script.count(f"# skipped: {n}:")]
    for k, name in blocks:
        assert f"mkdir -p inner/{k} && cd inner/{k} && (" in lines, name
    pp = next(ln for ln in launches if " -m gpucomm pingpong --method ccl " in ln)
    # the check's own step layout first, the bind wrapper (which runs the rest) last; the soak as in acceptance
    assert pp.startswith("  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --mpi=cray_shasta ")
    assert "gpucomm-bind " + VENV_PYTHON in pp and "--validate-every 1 --validate-sizes 8,1048576" in pp


def test_node_job_over_the_partitions_longest_job_is_refused(tmp_path):
    """Leonardo under boost_qos_dbg (30 min): the node job's time limit (its checks' own, added up)
    is over it: one line naming the limit, ReFrame's exit 1, every test case aborted, none run."""
    report = tmp_path / "report.json"
    out = reframe("--system", "leonardo", *ARGS, "--prefix", tmp_path, "--report-file", report,
                  env=clean_env(SBATCH_ACCOUNT=ACCOUNT, GPUCOMM_PYTHON=VENV_PYTHON, SBATCH_QOS="boost_qos_dbg",
                                **STANDIN))
    assert out.returncode == 1, out.stdout[-3000:]
    (line,) = [ln for ln in out.stdout.splitlines() if "refused before submitting" in ln]
    assert re.search(r"NodeAcceptanceCheck's time limit \d+ h \d\d min is over leonardo:booster's longest job, "
                     r"30 min \(extras\['max_time'\]", line), line
    assert "Ran 0/2 test case(s)" in out.stdout and "2 aborted" in out.stdout
