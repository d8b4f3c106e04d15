"""The pair matrix (node health): round-robin schedule, pair classes, real 2- and 3-rank host
runs with records and matrices, and fault injection end to end under ReFrame: a slow pair
FAILs naming that pair, a corrupted element FAILs naming size and rank, a killed rank ends the
run, bad input is one line and a non-zero exit."""

import json

import pytest

from gpucomm.constants import PAIRS_ROUNDS
from gpucomm.contract import read_run as read_records
from gpucomm.pairs import pair_class, tournament
from gpucomm.rfm.pairmatrix import alone_in_round, case_count
from reframe_helpers import clean_env, job_script, reframe, report_cases

ROOT_OK = {"OMPI_ALLOW_RUN_AS_ROOT": 1, "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": 1}


def all_records(stdout):
    return [json.loads(line.split(" ", 1)[1]) for line in stdout.splitlines()
            if line.startswith("GPUCOMM-RESULT ")]


@pytest.mark.parametrize("n", range(2, 10))
def test_tournament_covers_every_pair_once_in_disjoint_rounds(n):
    rounds = tournament(n)
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)
    pairs = [tuple(p) for r in rounds for p in r]
    assert sorted(pairs) == [(i, j) for i in range(n) for j in range(i + 1, n)]
    for r in rounds:
        ranks = [x for p in r for x in p]
        assert len(ranks) == len(set(ranks)) and len(r) == n // 2


@pytest.mark.parametrize("n,alone", [(2, [[0, 1]]), (3, [[1, 2], [0, 2], [0, 1]]), (4, []), (5, [])])
def test_pairs_alone_in_their_round(n, alone):
    """2 or 3 ranks: every round holds one pair, its single case again (no conc_* variables)."""
    assert alone_in_round(n) == alone


def test_pair_classes():
    lumi = {"1600": ["0-1", "2-3"], "800": ["0-6"], "default": "400"}
    assert pair_class(lumi, 1, 0) == "1600" and pair_class(lumi, 6, 0) == "800"
    assert pair_class(lumi, 0, 3) == "400" and pair_class(None, 0, 3) == "all"


@pytest.mark.parametrize("n", [2, 3])
def test_host_pair_matrix(mpirun, tmp_path, n):
    out = tmp_path / "r.json"
    run = mpirun(n, "pair-matrix", "--method", "host", "--sizes", "8,64K", "--iters", "10",
                 "--json", out)
    assert run.returncode == 0, run.stderr
    recs = all_records(run.stdout)
    assert len(recs) == case_count(n, 2) and all(r["validated"] for r in recs)
    single = {(r["mode"], tuple(r["pair"])) for r in recs if r["scope"] == "single" and r["size"] == 8}
    assert {p for m, p in single if m == "uni"} == {(i, j) for i in range(n) for j in range(n) if i != j}
    assert {p for m, p in single if m == "bidir"} == {(i, j) for i in range(n) for j in range(i + 1, n)}
    conc = [r for r in recs if r["scope"] == "concurrent" and r["size"] == 65536 and r["mode"] == "uni"]
    assert [r["round"] for r in conc] == list(range(len(tournament(n))))
    for r in conc:  # each pair's own goodput, none above the round's slowest-pair figure's inverse
        assert [p["pair"] for p in r["pair_results"]] == r["pairs"]
        assert all(p["goodput_GBps"] >= r["goodput_GBps"] * 0.999 for p in r["pair_results"])
    bidir = next(r for r in recs if r["mode"] == "bidir" and r["scope"] == "single")
    assert bidir["goodput_GBps"] == pytest.approx(2 * bidir["direction_GBps"])
    assert "pair matrix uni 8B latency us" in run.stdout
    assert "pair matrix bidir 64KiB goodput GB/s" in run.stdout
    assert "pair matrix uni 64KiB concurrent round 0:" in run.stdout
    assert json.load(open(out))["meta"]["rounds"] == tournament(n)
    _, summary = read_records(run.stdout)
    assert summary["ok"] and summary["validated"] == case_count(n, 2)


@pytest.mark.parametrize("n", [4, 5])
def test_rounds_only_runs_every_pair_once(mpirun, n):
    """--pairs rounds (a node pair matrix of many nodes): the n-1 (odd n: n) rounds of both
    modes, every pair once per mode and size, no single pair, no one-at-a-time table."""
    run = mpirun(n, "pair-matrix", "--method", "host", "--sizes", "8,64K", "--iters", "5",
                 "--pairs", PAIRS_ROUNDS)
    assert run.returncode == 0, run.stderr
    recs = all_records(run.stdout)
    assert len(recs) == case_count(n, 2, PAIRS_ROUNDS) == 2 * 2 * len(tournament(n))
    assert all(r["scope"] == "concurrent" and r["validated"] for r in recs)
    for size in (8, 65536):
        for mode in ("uni", "bidir"):
            pairs = [tuple(p["pair"]) for r in recs if r["size"] == size and r["mode"] == mode
                     for p in r["pair_results"]]
            assert sorted(pairs) == [(i, j) for i in range(n) for j in range(i + 1, n)]
    assert "one pair at a time" not in run.stdout and "concurrent round 0:" in run.stdout
    assert read_records(run.stdout)[1]["validated"] == len(recs)


def test_corrupted_element_names_size_rank_and_pair(mpirun):
    run = mpirun(3, "pair-matrix", "--method", "host", "--sizes", "8,4K", "--iters", "10",
                 extra_env={"GPUCOMM_TEST_CORRUPT": "2:4096"})
    assert run.returncode == 4, run.stderr
    assert "rank 2" in run.stderr and "size 4096 B" in run.stderr and "uni 0->2" in run.stderr
    assert "Traceback" not in run.stderr


def test_killed_rank_ends_the_run(mpirun):
    run = mpirun(3, "pair-matrix", "--method", "host", "--sizes", "8,4K", "--iters", "10",
                 "--timeout", "60", extra_env={"GPUCOMM_TEST_HANG": "1:4096", "GPUCOMM_TEST_HANG_EXIT": "1"},
                 timeout=120)
    assert run.returncode != 0 and "GPUCOMM-DONE" not in run.stdout


@pytest.mark.parametrize("args,env,words", [
    (["--sizes", "8"], {"GPUCOMM_TEST_SLOW_PAIR": "0:0:1"}, "GPUCOMM_TEST_SLOW_PAIR"),
    (["--sizes", "8"], {"GPUCOMM_TEST_SLOW_PAIR": "0:1:fast"}, "GPUCOMM_TEST_SLOW_PAIR"),
    (["--sizes", "0"], {}, "size"),
    (["--iters", "-1"], {}, "--iters"),
    (["--method", "none"], {}, "--method"),
])
def test_bad_input_is_one_line(mpirun, args, env, words):
    argv = ["pair-matrix", "--method", "host", *args] if "--method" not in args else ["pair-matrix", *args]
    run = mpirun(2, *argv, extra_env=env, timeout=60)
    assert run.returncode == 2, run.stderr
    assert words in run.stderr and "Traceback" not in run.stderr


def test_one_rank_is_refused(mpirun):
    run = mpirun(1, "pair-matrix", "--method", "host", "--sizes", "8", timeout=60)
    assert run.returncode == 2 and "at least 2 ranks" in run.stderr


# -- under ReFrame, on the local CPU partition with host ranks -----------------------------

#: the hook's sleep in each timed iteration of the slowed pair: its 1 MiB rates stay below 1 MiB
#: per half of it (a ping-pong's time is half its round trip), 0.042 GB/s
SLOW_S = 0.05
#: references with a floor (0.1 GB/s) above the slowed pair's ceiling, which no transfer through
#: that sleep can reach, whatever this machine's speed; the other pairs are compared with the
#: slowed one, never with a reference (no test judges this machine's speed)
HOST_REFS = """PairMatrixCheck:
  local:cpu:
    host:
      all:
        uni_1MiB: [1.0, -0.9, null, GB/s]
        bidir_1MiB: [1.0, -0.9, null, GB/s]
        conc_uni_1MiB: [1.0, -0.9, null, GB/s]
        conc_bidir_1MiB: [1.0, -0.9, null, GB/s]
"""


def run_check(tmp_path, *opts, **env):
    report = tmp_path / "report.json"
    run = reframe("-c", "checks/pairmatrix.py", "-r", "-S", "sizes=8,1M", "-S", "iters=10",
                  "-S", "perf_sizes=1M", *opts, "--prefix", tmp_path, "--report-file", report,
                  env=clean_env(**ROOT_OK, **env), timeout=300)
    return run, report_cases(report) if report.exists() else []


def _value(case, name):
    return case["perfvalues"][f"local:cpu:{name}"][0]


def test_slow_pair_fails_the_check_naming_that_pair(tmp_path):
    refs = tmp_path / "refs"
    refs.mkdir()
    (refs / "local.yaml").write_text(HOST_REFS)
    run, (case,) = run_check(tmp_path, GPUCOMM_REFERENCE_DIR=refs, GPUCOMM_TEST_SLOW_PAIR=f"0:1:{SLOW_S}")
    assert run.returncode != 0
    assert case["result"] == "fail" and case["fail_phase"] == "performance", case["fail_reason"]
    reason = case["fail_reason"]
    for var in ("uni_1MiB_0-1=", "bidir_1MiB_0-1="):
        assert var in reason, reason
    # one pair: no variable that copies another (its round is its single case again; the
    # slowest pair is that pair)
    perf = {k.split(":")[-1] for k in case["perfvalues"]}
    assert not [k for k in perf if k.startswith(("conc_", "min_pair_"))], sorted(perf)
    # the reverse direction was not slowed: far faster than the slowed one
    assert _value(case, "uni_1MiB_1-0") > 2 * _value(case, "uni_1MiB_0-1"), case["perfvalues"]


def test_rounds_only_names_the_slow_pair_of_its_round(tmp_path):
    """-S pair_scope=rounds: the rounds' variables only (conc_*, conc_latency_8B, min_pair_conc_*),
    each pair once; the slowed pair fails in its round, the pair beside it in that round does
    not."""
    refs = tmp_path / "refs"
    refs.mkdir()
    (refs / "local.yaml").write_text(HOST_REFS)
    # 4 ranks on the CI's 2 CPUs: mpirun must be told it may oversubscribe them
    run, (case,) = run_check(tmp_path, "-S", "pair_scope=rounds", "-S", "ranks_per_node=4",
                             GPUCOMM_REFERENCE_DIR=refs, GPUCOMM_TEST_SLOW_PAIR=f"0:1:{SLOW_S}",
                             GPUCOMM_MPIRUN_OPTIONS="--oversubscribe")
    perf = {k.split(":")[-1]: v for k, v in case["perfvalues"].items()}
    assert not [k for k in perf if k.startswith(("uni_", "bidir_", "latency_"))], sorted(perf)
    assert {f"conc_latency_8B_{i}-{j}" for i in range(4) for j in range(i + 1, 4)} <= set(perf)
    assert "min_pair_conc_uni_1MiB" in perf
    reason = case["fail_reason"]
    assert case["result"] == "fail" and case["fail_phase"] == "performance", reason
    assert "conc_uni_1MiB_0-1=" in reason and "min_pair_conc_uni_1MiB=" in reason, reason
    (partner,) = [p for r in tournament(4) if [0, 1] in r for p in r if p != [0, 1]]
    # the pair beside it in that round was not slowed: far faster than the slowed one
    assert perf[f"conc_uni_1MiB_{partner[0]}-{partner[1]}"][0] > 2 * perf["conc_uni_1MiB_0-1"][0], perf


def test_bad_pair_scope_is_a_setup_failure(tmp_path):
    run, (case,) = run_check(tmp_path, "-S", "pair_scope=some")
    assert case["result"] == "fail" and case["fail_phase"] == "setup"
    assert "-S pair_scope=some: one of auto, all, rounds" in case["fail_reason"]


def test_corruption_fails_the_check_in_sanity(tmp_path):
    run, (case,) = run_check(tmp_path, GPUCOMM_TEST_CORRUPT="1:8")
    assert case["result"] == "fail" and case["fail_phase"] == "sanity"
    assert "size 8 B" in case["fail_reason"] and "rank 1" in case["fail_reason"]


@pytest.mark.parametrize("opt,words", [("sizes=8:x", "-S sizes=8:x"), ("iters=-2", "-S iters=-2"),
                                       ("warmup=-5", "-S warmup=-5"), ("perf_sizes=1Q", "-S perf_sizes=1Q"),
                                       ("graph=maybe", "-S graph=maybe"), ("budget=-1", "-S budget=-1.0"),
                                       ("batch=-3", "-S batch=-3")])
def test_bad_variable_is_a_setup_failure_with_the_reason(tmp_path, opt, words):
    run, (case,) = run_check(tmp_path, "-S", opt)
    assert run.returncode != 0
    assert case["result"] == "fail" and case["fail_phase"] == "setup"
    assert words in case["fail_reason"] and "Traceback" not in case["fail_reason"]


LUMI_REFS = """PairMatrixCheck:
  lumi:standard-g:
    ccl:
      '1600': {uni_256MiB: [150.0, -0.1, null, GB/s]}
      '800': {uni_256MiB: [80.0, -0.1, null, GB/s]}
      '400': {uni_256MiB: [40.0, -0.1, null, GB/s]}
"""


def test_lumi_pairs_get_their_class_reference(tmp_path):
    """Dry-run on LUMI: 8 GCD ranks, each pair's reference from its Infinity Fabric class."""
    refs = tmp_path / "refs"
    refs.mkdir()
    (refs / "lumi.yaml").write_text(LUMI_REFS)
    report = tmp_path / "report.json"
    run = reframe("--system", "lumi", "-c", "checks/pairmatrix.py", "-n", "method=ccl", "--dry-run",
                  "--prefix", tmp_path, "--report-file", report,
                  env=clean_env(SBATCH_ACCOUNT="project_x", GPUCOMM_REFERENCE_DIR=refs,
                                GPUCOMM_PYTHON="/venv/bin/python"))
    assert run.returncode == 0, run.stdout[-3000:]
    (case,) = report_cases(report)
    perf = {k.split(":")[-1]: v for k, v in case["perfvalues"].items()}
    assert perf["uni_256MiB_0-1"][1] == 150.0 and perf["uni_256MiB_7-6"][1] == 150.0
    assert perf["uni_256MiB_0-6"][1] == 80.0 and perf["uni_256MiB_0-2"][1] == 40.0
    assert perf["min_pair_uni_256MiB"][1] == 40.0
    # 4 pairs in each round: the rounds' variables are their own measurements
    assert sum(k.startswith("conc_uni_256MiB_") for k in perf) == 28
    assert perf["bidir_256MiB_0-1"][1] == 0  # no reference given
    assert sum(k.startswith("uni_256MiB_") for k in perf) == 56



def test_leonardo_node_pair_matrix_stops_at_256_nodes_saying_why(tmp_path):
    """Issue 54 item 9: Leonardo's largest QOS, boost_qos_bprod, takes 65-256 nodes (qos-copy,
    config/systems/leonardo.py): a node pair matrix of 257 nodes is a SKIP naming the limit,
    never a job sbatch would refuse (test_internode.py: 128 nodes ask for boost_qos_bprod)."""
    report = tmp_path / "report.json"
    out = reframe("--system", "leonardo", "-c", "checks/pairmatrix.py", "-n", "PairMatrixCheck%method=ccl",
                  "-S", "PairMatrixCheck.num_nodes=257", "-S", "PairMatrixCheck.ranks_per_node=1",
                  "--dry-run", "--prefix", tmp_path, "--report-file", report,
                  env=clean_env(SBATCH_ACCOUNT="x", GPUCOMM_PYTHON="/v/bin/python"))
    assert out.returncode == 0, out.stdout[-3000:]
    (case,) = report_cases(report)
    assert case["result"] == "skip" and job_script(case) is None, case
    assert "leonardo:booster takes at most 256 nodes per job (extras['max_nodes']), not 257" in out.stdout
