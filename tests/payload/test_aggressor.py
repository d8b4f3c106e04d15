"""The aggressor (ops/aggressor.py): sustained traffic for a given time, on 4 ranks as 2 "nodes"
x 2 (--ranks-per-node): what it reports it moved, its pace, its ready and stop files, its
validation, and its bad input."""

import json
import threading
import time

import pytest

from gpucomm.constants import EXIT_BAD_INPUT, EXIT_VALIDATION
from gpucomm.contract import ERROR_PREFIX, read_run
from gpucomm.metrics import aggressor_GBps
from gpucomm.payload.ops.aggressor import Aggressor

K64 = 64 << 10


def one_error(run):
    lines = [ln for ln in run.stderr.splitlines() if ERROR_PREFIX in ln]
    assert "Traceback" not in run.stderr and len(lines) == 1, run.stderr
    return lines[0]


def aggressor(mpirun, *args, ranks=4, per_node=2, **kw):
    return mpirun(ranks, "aggressor", "--method", "host", "--sizes", "64K", "--ranks-per-node",
                  per_node, "--quiet", *args, **kw)


def test_stream_peers():
    # rank i of node k <-> rank i of node k + N/2
    assert [Aggressor.stream_peer([0, 0, 1, 1], r) for r in range(4)] == [2, 3, 0, 1]
    assert [Aggressor.stream_peer([0, 1, 2, 3], r) for r in range(4)] == [2, 3, 0, 1]
    with pytest.raises(Exception, match="even number of nodes"):
        Aggressor.stream_peer([0, 0, 0, 0], 0)
    with pytest.raises(Exception, match=r"2 node\(s\) \(3, 1 ranks\)"):
        Aggressor.stream_peer([0, 0, 0, 1], 0)


@pytest.mark.parametrize("pattern", ["streams", "alltoall"])
def test_runs_for_its_duration_and_reports_what_it_moved(mpirun, tmp_path, pattern):
    ready = tmp_path / "ready"
    run = aggressor(mpirun, "--pattern", pattern, "--duration", "1.5", "--ready-file", ready,
                    "--json", tmp_path / "a.json")
    assert run.returncode == 0, run.stderr
    records, summary = read_run(run.stdout)
    rec = records[K64]
    assert summary["ok"] and rec["validated"] and rec["ended"] == "duration"
    assert rec["iters"] == 1 and rec["iterations"] > 10  # one sample: the whole run
    assert 1.5 <= rec["elapsed_s"] < 10
    per_rank = K64 * (3 if pattern == "alltoall" else 1)  # bytes one rank sends per iteration
    assert rec["bytes_moved"] == rec["iterations"] * per_rank * 4
    assert rec["goodput_GBps"] == pytest.approx(aggressor_GBps(rec["bytes_moved"], rec["elapsed_s"]))
    assert rec["busbw_GBps"] == pytest.approx(rec["goodput_GBps"] / 4)
    assert ready.exists()  # written once the load was on
    meta = json.loads((tmp_path / "a.json").read_text())["meta"]
    assert meta["pattern"] == pattern and meta["duration_s"] == 1.5


def test_target_bandwidth_paces_each_rank(mpirun):
    """The pace is a ceiling: no rank above its target (how close below it comes is this
    machine's speed, which no test judges: other tests' ranks share its 2 CPUs)."""
    run = aggressor(mpirun, "--duration", "2", "--target-bandwidth", "0.02")
    assert run.returncode == 0, run.stderr
    rec = read_run(run.stdout)[0][K64]
    assert rec["target_GBps"] == 0.02
    assert 0 < rec["busbw_GBps"] <= 1.05 * 0.02
    assert rec["iterations"] > 1  # paced between iterations, not one long wait


def test_stop_file_ends_the_run_early(mpirun, tmp_path):
    stop = tmp_path / "stop"
    timer = threading.Timer(4.0, stop.touch)  # after the launch and the first iterations
    timer.start()
    t0 = time.monotonic()
    try:
        run = aggressor(mpirun, "--duration", "120", "--stop-file", stop, ranks=2, per_node=1)
    finally:
        timer.cancel()
    assert run.returncode == 0, run.stderr
    rec = read_run(run.stdout)[0][K64]
    assert rec["ended"] == "stop-file" and rec["validated"]
    assert time.monotonic() - t0 < 60


@pytest.mark.parametrize("name", ["--stop-file", "--ready-file"])
def test_stale_files_are_bad_input(mpirun, tmp_path, name):
    stale = tmp_path / "old"
    stale.touch()
    run = aggressor(mpirun, name, stale, ranks=2, per_node=1)
    assert run.returncode == EXIT_BAD_INPUT
    assert "exists already: remove it first" in one_error(run)


@pytest.mark.parametrize("pattern", ["streams", "alltoall"])
def test_corruption_is_caught(mpirun, pattern):
    run = aggressor(mpirun, "--pattern", pattern, "--duration", "0.5",
                    extra_env={"GPUCOMM_TEST_CORRUPT": f"3:{K64}"})
    assert run.returncode == EXIT_VALIDATION
    assert "rank 3:" in one_error(run)


@pytest.mark.parametrize("args,message", [
    (["--duration", "0"], "must be > 0"),
    (["--target-bandwidth", "-1"], "must be >= 0"),
    (["--pattern", "ring"], "invalid choice: 'ring'"),
    (["--ranks-per-node", "1"], "needs an even number of nodes with the same number of ranks, "
                                "got 3 node(s)"),
])
def test_bad_input(mpirun, args, message):
    run = mpirun(3, "aggressor", "--method", "host", "--sizes", "64K", *args)
    assert run.returncode == EXIT_BAD_INPUT
    assert message in one_error(run)
