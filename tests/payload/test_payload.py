"""The payload engine on the CPU: sizes, formulas, validation, statistics, output, and real
2- and 3-rank MPI runs of every operation with the numpy backend, plus every bad-input path."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gpucomm.contract import ERROR_PREFIX, read_run as read_records
from gpucomm.errors import GpucommError
from gpucomm.metrics import algbw_GBps, busbw_GBps, goodput_GBps, time_stats_us
from gpucomm.payload import capabilities
from gpucomm.payload.backend import NumpyBackend, pattern_seed
from gpucomm.payload.topology import parse_nvlink_status
from gpucomm.site.probe import slug
from gpucomm.sizes import parse_size, parse_sizes, size_label

DATA = Path(__file__).parents[1] / "data"


# -- sizes ---------------------------------------------------------------------------------

def test_sizes():
    assert parse_sizes("1:1G") == [2 ** i for i in range(31)]
    assert parse_sizes("8:1M:4") == [8, 32, 128, 512, 2048, 8192, 32768, 131072, 524288]
    assert parse_sizes("64M,8,1KiB,8") == [8, 1024, 64 << 20]
    assert parse_size("4k") == 4096 and parse_size("2GiB") == 2 << 30 and parse_size("3B") == 3
    assert [size_label(s) for s in (8, 1024, 3000, 1 << 20, 64 << 20, 1 << 30)] == \
        ["8B", "1KiB", "3000B", "1MiB", "64MiB", "1GiB"]


@pytest.mark.parametrize("bad", ["", "x", "1X", "0", "-4", "1G:8", "1:8:1", "1:8:x", "1:2:3:4"])
def test_bad_sizes(bad):
    with pytest.raises(GpucommError):
        parse_sizes(bad)


# -- formulas ------------------------------------------------------------------------------

def test_formulas():
    s, t = 1 << 30, 0.01
    assert goodput_GBps("pingpong", s, t, 2) == pytest.approx(s / t / 1e9)
    assert goodput_GBps("multi-pingpong", s, t, 8, pairs=4) == pytest.approx(4 * s / t / 1e9)
    assert goodput_GBps("alltoall", s, t, 8) == pytest.approx(7 * s / t / 1e9)
    assert goodput_GBps("allreduce", s, t, 8) == pytest.approx(s / t / 1e9)
    # nccl-tests: all-reduce busbw = algbw * 2(n-1)/n; all-to-all algbw over the n*S buffer
    assert busbw_GBps("allreduce", s, t, 8) == pytest.approx(s / t / 1e9 * 14 / 8)
    assert algbw_GBps("alltoall", s, t, 8) == pytest.approx(8 * s / t / 1e9)
    assert busbw_GBps("alltoall", s, t, 8) == pytest.approx(goodput_GBps("alltoall", s, t, 8))
    assert busbw_GBps("pingpong", s, t, 2) == pytest.approx(goodput_GBps("pingpong", s, t, 2))
    # nccl-tests' own row (all_reduce_perf -g 2, 2 GiB): time 6384.25 us -> busbw 336.37 GB/s
    assert busbw_GBps("allreduce", 2147483648, 6384.25e-6, 2) == pytest.approx(336.37, abs=0.01)


def test_time_stats():
    st = time_stats_us([1e-6, 2e-6, 3e-6, 4e-6, 100e-6])
    assert st["median"] == pytest.approx(3.0) and st["min"] == pytest.approx(1.0)
    assert st["max"] == pytest.approx(100.0) and st["p05"] == pytest.approx(1.2)
    assert st["p95"] == pytest.approx(80.8) and st["mean"] == pytest.approx(22.0)


# -- patterns, backend, parsers ------------------------------------------------------------

def test_patterns_are_rank_dependent_and_never_zero():
    be = NumpyBackend()
    for size in (1, 8, 251, 252, 4096, 1 << 20):
        assert len({pattern_seed(r, size) for r in range(250)}) == 250, size
        # all-to-all blocks: distinct sources for one destination, distinct destinations
        assert len({pattern_seed(s, 3, size) for s in range(250)}) == 250
        assert len({pattern_seed(3, d, size) for d in range(250)}) == 250
        a, b = be.pattern(size, pattern_seed(0, size)), be.pattern(size, pattern_seed(1, size))
        assert a.min() >= 1 and (size < 2 or not np.array_equal(a, b))
    a = be.pattern(1000, 3)
    b = a.copy()
    b[777] ^= 1
    assert be.first_mismatch(a, a) == -1 and be.first_mismatch(b, a) == 777


def test_nvlink_parser_on_real_output():
    text = (DATA / "h200x2" / "nvidia-smi-nvlink-s.txt").read_text()
    # two GPUs x 18 links x 26.562 GB/s; one GPU's output is what the guard reads
    assert parse_nvlink_status(text) == pytest.approx(2 * 18 * 26.562)
    one = text.split("GPU 1:")[0]
    assert parse_nvlink_status(one) == pytest.approx(478.116)


def test_gpu_slugs():
    assert slug("NVIDIA H200") == "h200"
    assert slug("NVIDIA A100-SXM4-64GB") == "a100"
    assert slug("NVIDIA GH200 120GB") == "gh200"
    assert slug("AMD Instinct MI250X") == "mi250x"


def test_gpu_aware_levels(monkeypatch):
    for var in ("GPUCOMM_GPU_AWARE_MPI", "MPICH_GPU_SUPPORT_ENABLED", "MV2_USE_CUDA"):
        monkeypatch.delenv(var, raising=False)
    assert capabilities.gpu_aware_mpi("Open MPI v5.0.11")[0] == "none"
    monkeypatch.setenv("MPICH_GPU_SUPPORT_ENABLED", "1")
    assert capabilities.gpu_aware_mpi("MPI VERSION 3.1 CRAY MPICH")[0] == "full"
    for value, level in (("p2p", "p2p"), ("1", "full"), ("full", "full"), ("0", "none"),
                         ("none", "none"), (" FULL ", "full")):
        monkeypatch.setenv("GPUCOMM_GPU_AWARE_MPI", value)
        assert capabilities.gpu_aware_mpi("")[0] == level
    for typo in ("yes", "ful", "2", "cuda"):  # only the documented values: a typo is an error
        monkeypatch.setenv("GPUCOMM_GPU_AWARE_MPI", typo)
        with pytest.raises(GpucommError, match="bad GPUCOMM_GPU_AWARE_MPI"):
            capabilities.gpu_aware_mpi("")


# -- real MPI runs -------------------------------------------------------------------------

def records_of(stdout):
    records, summary = read_records(stdout)
    return records, summary


@pytest.mark.parametrize("op,method,ranks", [
    ("pingpong", "host", 2), ("pingpong", "staging", 2), ("pingpong", "gpu-aware-mpi", 2),
    ("bw", "host", 2), ("bw", "staging", 2), ("bw", "gpu-aware-mpi", 2),
    ("allreduce", "host", 3), ("allreduce", "staging", 2), ("allreduce", "gpu-aware-mpi", 2),
    ("alltoall", "host", 3), ("alltoall", "staging", 2), ("alltoall", "gpu-aware-mpi", 2),
])
def test_mpi_run(mpirun, tmp_path, op, method, ranks):
    out = tmp_path / "r.json"
    sizes = "8,4K,1M" if op not in ("pingpong", "bw") else "1,7,4K,1M"
    run = mpirun(ranks, op, "--method", method, "--backend", "numpy", "--sizes", sizes,
                 "--iters", "30", "--warmup", "3", "--json", out)
    assert run.returncode == 0, run.stderr
    records, summary = records_of(run.stdout)
    expected = parse_sizes(sizes)
    assert summary == {"ok": True, "sizes": len(expected), "validated": len(expected), "op": op,
                       "method": method}
    assert sorted(records) == expected
    saved = json.loads(out.read_text())
    assert saved["meta"]["nranks"] == ranks and saved["meta"]["backend"] == "numpy"
    for size, rec in records.items():
        t = rec["time_us"]
        assert rec["validated"] and rec["iters"] == 30 and rec["warmup"] == 3
        assert 0 < t["min"] <= t["p05"] <= t["median"] <= t["p95"] <= t["max"]
        assert rec["goodput_GBps"] == pytest.approx(goodput_GBps(op, size, t["median"] * 1e-6, ranks))
        assert rec["busbw_GBps"] == pytest.approx(busbw_GBps(op, size, t["median"] * 1e-6, ranks))
    assert "median_us" in run.stdout  # the human table


def test_default_iterations(mpirun):
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8,2M", "--quiet")
    records, _ = records_of(run.stdout)
    small, big = records[8], records[2 << 20]
    # the default iterations are the least a size runs: blocks are added to the precision target
    # (contract.STOP_WORDS says which stopped it; "iters": none added)
    for rec, iters, warmup, batch in ((small, 1000, 100, 20), (big, 50, 5, 5)):
        assert (rec["warmup"], rec["batch"]) == (warmup, batch)
        assert rec["iters"] >= iters and rec["iters"] == rec["samples"] * batch, rec
        stopped = rec["precision"]["stopped"]
        # "iters": none added; "target" added blocks; "cap": the cap spent, by added blocks or
        # by the iterations alone (a loaded machine)
        assert stopped in ("iters", "target", "cap") and (stopped != "iters" or rec["iters"] == iters), rec
    assert small["graph"] is False and "median_us" not in run.stdout


def test_batch_and_persistent_requests(mpirun):
    """--batch N times N iterations per sample; a batch larger than --iters is cut to it; the
    header says how MPI is called (persistent requests unless GPUCOMM_MPI_PERSISTENT=0)."""
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8,64", "--iters", "30", "--batch", "7")
    records, summary = records_of(run.stdout)
    assert summary["ok"] and records[8]["batch"] == 7 and records[8]["samples"] == 5
    assert records[8]["iters"] == 35 and "mpi-requests=persistent" in run.stdout
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8", "--iters", "3", "--batch", "50",
                 extra_env={"GPUCOMM_MPI_PERSISTENT": "0"})
    records, summary = records_of(run.stdout)
    assert summary["ok"] and records[8]["batch"] == 3 and records[8]["samples"] == 1
    assert "mpi-requests=plain" in run.stdout
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8", extra_env={"GPUCOMM_MPI_PERSISTENT": "yes"})
    assert run.returncode == 2 and "GPUCOMM_MPI_PERSISTENT='yes': expected 0 or 1" in run.stderr


def test_bw_window_in_meta_and_both_request_styles(mpirun, tmp_path):
    """bw: --window messages per iteration (default 64, osu_bw's), time per message, in the
    run's meta; persistent and plain requests move and validate the same data; --window is
    an option of bw alone."""
    out = tmp_path / "bw.json"
    run = mpirun(2, "bw", "--method", "host", "--sizes", "8,64K", "--iters", "20", "--window", "8",
                 "--json", out)
    assert run.returncode == 0, run.stderr
    records, summary = records_of(run.stdout)
    assert summary["ok"] and sorted(records) == [8, 65536] and all(r["validated"] for r in records.values())
    assert json.loads(out.read_text())["meta"]["window"] == 8
    run = mpirun(2, "bw", "--method", "host", "--sizes", "4K", "--iters", "20", "--json", out,
                 extra_env={"GPUCOMM_MPI_PERSISTENT": "0"})
    assert run.returncode == 0, run.stderr
    assert json.loads(out.read_text())["meta"]["window"] == 64 and "mpi-requests=plain" in run.stdout
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8", "--window", "8")
    assert run.returncode == 2 and "unrecognized arguments: --window 8" in run.stderr


def test_graph_on_needs_a_device_method(mpirun):
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8", "--graph", "on")
    assert run.returncode == 2 and "--graph on: method host synchronises through the host" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("op,rank,size,words", [
    ("pingpong", 1, 4096, ["rank 1", "size 4096 B", "offset 2048"]),
    ("allreduce", 0, 4096, ["rank 0", "size 4096 B", "all-reduce result wrong"]),
    ("alltoall", 1, 4096, ["rank 1", "size 4096 B", "block from rank 1"]),
    ("bw", 1, 4096, ["rank 1", "size 4096 B", "offset 2048"]),
])
def test_corrupted_element_fails_naming_size_and_rank(mpirun, op, rank, size, words):
    run = mpirun(2, op, "--method", "host", "--sizes", "8,4K,64K", "--iters", "5",
                 extra_env={"GPUCOMM_TEST_CORRUPT": f"{rank}:{size}"})
    assert run.returncode != 0
    records, summary = records_of(run.stdout)
    assert summary["ok"] is False and sorted(records) == [8]  # nothing after the bad size
    msg = [ln for ln in run.stderr.splitlines() if ERROR_PREFIX in ln]
    assert len(msg) == 1 and all(w in msg[0] for w in words), run.stderr
    assert "Traceback" not in run.stderr


def test_plausibility_guard(mpirun):
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "1M", "--iters", "5",
                 "--max-bandwidth", "0.001")
    assert run.returncode != 0
    assert "above the link's nominal 0.0 GB/s" in run.stderr and "measurement bug" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("ranks,args,message", [
    (1, ["pingpong", "--method", "host", "--sizes", "8"], "pingpong needs exactly 2 ranks, got 1"),
    (3, ["pingpong", "--method", "host", "--sizes", "8"], "pingpong needs exactly 2 ranks, got 3"),
    (3, ["bw", "--method", "host", "--sizes", "8"], "bw needs exactly 2 ranks, got 3"),
    (2, ["bw", "--method", "host", "--window", "0"], "must be >= 1"),
    (2, ["pingpong", "--method", "warp", "--sizes", "8"], "unknown method 'warp'"),
    (2, ["pingpong", "--method", "host", "--sizes", "1Q"], "bad size '1Q'"),
    (2, ["pingpong", "--method", "host", "--iters", "0"], "must be >= 1"),
    (2, ["pingpong", "--method", "host", "--max-bandwidth", "-1"], "must be >= 0"),
    (2, ["allreduce", "--method", "host", "--sizes", "6"], "multiples of 4 bytes"),
    (2, ["pingpong", "--method", "ipc-copy", "--backend", "numpy"], "cannot use the numpy backend"),
    (2, ["pingpong", "--method", "host", "--timer", "device", "--sizes", "8"], "--timer device needs"),
    (2, ["frobnicate"], "invalid choice: 'frobnicate'"),
])
def test_bad_input_is_one_line_and_nonzero(mpirun, ranks, args, message):
    run = mpirun(ranks, *args)
    assert run.returncode != 0
    lines = [ln for ln in run.stderr.splitlines() if ERROR_PREFIX in ln]
    assert len(lines) == 1, run.stderr  # printed once, not once per rank
    assert message in lines[0]
    assert "Traceback" not in run.stderr


def test_gpu_methods_without_gpu_say_so(mpirun):
    try:
        import cupy  # noqa: F401
        pytest.skip("cupy is installed here: the no-cupy path is not reachable")
    except ImportError:
        pass
    for method in ("staging", "gpu-aware-mpi", "ipc-copy", "ccl"):
        run = mpirun(2, "pingpong", "--method", method, "--sizes", "8")
        assert run.returncode == 3, (method, run.stderr)
        assert "cupy is not usable here" in run.stderr and "Traceback" not in run.stderr


def test_without_mpi_library_clear_error(tmp_path):
    """mpi4py finds no libmpi: one line, no traceback."""
    env = {"PATH": "/usr/bin:/bin", "MPI4PY_LIBMPI": str(tmp_path / "libmpi-does-not-exist.so"),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    run = subprocess.run([sys.executable, "-m", "gpucomm", "pingpong", "--method", "host", "--sizes", "8"],
                         env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert "mpi4py cannot load an MPI library" in run.stderr and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr  # the loader's message spans several


def test_probe_prints_json():
    run = subprocess.run([sys.executable, "-m", "gpucomm", "probe"], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0
    info = json.loads(run.stdout)
    assert {"gpu_count", "gpu_vendor", "mpi", "libucx", "python"} <= set(info)


def test_watchdog_ends_a_hung_rank(mpirun):
    """A rank that stops answering: every rank ends within the time limit, naming where."""
    import time
    t0 = time.monotonic()
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8,4K", "--iters", "5", "--timeout", "4",
                 extra_env={"GPUCOMM_TEST_HANG": "1:4096"}, timeout=120)
    assert time.monotonic() - t0 < 60
    assert run.returncode != 0
    lines = [ln for ln in run.stderr.splitlines() if "timed out" in ln]
    assert lines and all("pingpong/host timed out after 4 s" in ln for ln in lines), run.stderr
    assert any("size 4096 B" in ln for ln in lines) and "Traceback" not in run.stderr
    records, summary = records_of(run.stdout)
    assert sorted(records) == [8] and summary is None  # it never finished


def test_killed_rank_ends_the_run(mpirun, tmp_path):
    """A rank killed mid-run (here: it exits at once from the hang hook's place): mpirun ends the
    others, no hang."""
    import time
    t0 = time.monotonic()
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8,4K", "--iters", "5", "--timeout", "30",
                 extra_env={"GPUCOMM_TEST_HANG": "1:4096", "GPUCOMM_TEST_HANG_EXIT": "1"}, timeout=120)
    assert run.returncode != 0 and time.monotonic() - t0 < 25


def test_graph_path_with_a_replaying_stand_in(mpirun):
    """The engine's graph path without a GPU (tests/device_standin.py: host memory as device
    memory, a 'graph' that replays the captured steps): captured after the warm-up, launched
    once per sample, every record says a graph was used, every size validated."""
    run = mpirun.script(2, (Path(__file__).parents[1] / "device_standin.py"), "pingpong", "8,4K", "graph")
    assert run.returncode == 0, run.stderr
    records, summary = records_of(run.stdout)
    assert summary["ok"] and sorted(records) == [8, 4096]
    assert all(r["graph"] is True and r["batch"] == 4 and r["validated"] for r in records.values())
    assert "loop=CUDA/HIP graph" in run.stdout
    run = mpirun.script(2, (Path(__file__).parents[1] / "device_standin.py"), "bw", "8,4K", "graph")
    assert run.returncode == 0, run.stderr
    records, summary = records_of(run.stdout)
    assert summary["ok"] and all(r["graph"] is True and r["validated"] for r in records.values())
