"""The nvshmem method without a GPU (tests/nvshmem_standin.py: shared memory as the symmetric
heap, host "kernels" doing the puts and signal adds, the method's code unchanged): bootstrap
from the broadcast unique id, the environment set before init, symmetric buffers, the signal
counts of every operation on the kernel and the stream path, validation, refusals."""

import json
from pathlib import Path

import pytest

STANDIN = Path(__file__).parents[1] / "nvshmem_standin.py"


def _lines(stdout, tag):
    return [json.loads(ln.split(" ", 1)[1]) for ln in stdout.splitlines() if ln.startswith(tag)]


@pytest.mark.parametrize("n,op,path", [
    (2, "pingpong", "auto"),
    (2, "pingpong", "stream"),
    (2, "bw", "kernel"),
    (2, "bw", "stream"),
    (2, "pair-matrix", "auto"),
    (3, "pair-matrix", "kernel"),
    (2, "alltoall", "auto"),
    (4, "alltoall", "auto"),
    (3, "allreduce", "auto"),
])
def test_nvshmem_moves_validates_and_counts_its_signals(mpirun, n, op, path):
    # 1M with GPUCOMM_NVSHMEM_BLOCKS=4 and the 64 KiB chunk: 4 blocks, each signalling
    run = mpirun.script(n, STANDIN, op, "8,4K,1M",
                        env={"GPUCOMM_NVSHMEM_PATH": path, "GPUCOMM_NVSHMEM_BLOCKS": "4"})
    assert run.returncode == 0, run.stdout + run.stderr
    done = _lines(run.stdout, "GPUCOMM-DONE")
    assert len(done) == 1 and done[0]["ok"], run.stdout
    recs = _lines(run.stdout, "GPUCOMM-RESULT")
    assert recs and all(r["validated"] for r in recs)
    assert run.stdout.count("signal counts agree") == n, run.stdout
    if op == "pingpong" and path == "auto":  # the timed loop is one launch per sample
        assert "launches ['pingpong']" in run.stdout


def test_the_meta_says_how_nvshmem_ran(mpirun, tmp_path):
    out = tmp_path / "r.json"
    run = mpirun.script(2, STANDIN, "pingpong", "8", env={"STANDIN_JSON": str(out),
                                                          "NVSHMEM_SYMMETRIC_SIZE": "1M"})
    assert run.returncode == 0, run.stdout + run.stderr
    meta = json.loads(out.read_text())["meta"]["nvshmem"]
    # the stand-in has 8 SMs: the default 32 blocks are clamped to them; a heap set too small
    # for the run is raised to what it needs (buffers, signals, margin)
    assert meta["path"] == "auto" and meta["max_blocks"] == 8
    assert meta["remote_transport"] == "none"  # every rank on one host: no network transport
    assert meta["symmetric_size"] == 8 + 8 + 3 * 2 * 8 + (256 << 20)


def test_a_corrupted_element_fails_validation(mpirun):
    run = mpirun.script(2, STANDIN, "pingpong", "8,4K", env={"GPUCOMM_TEST_CORRUPT": "1:4096"})
    assert run.returncode == 4, run.stdout + run.stderr
    assert "data received from rank 0 is wrong at size 4096 B" in run.stderr
    assert "Traceback" not in run.stderr


def test_no_p2p_between_gpus_of_one_node_is_a_capability_error(mpirun):
    run = mpirun.script(2, STANDIN, "pingpong", "8", "no-p2p")
    assert run.returncode == 3, run.stdout + run.stderr
    assert "no P2P path from its GPU to rank" in run.stderr
    assert "Traceback" not in run.stderr and not _lines(run.stdout, "GPUCOMM-RESULT")


def test_bad_path_and_block_requests_are_refused(mpirun):
    for env, msg in (({"GPUCOMM_NVSHMEM_PATH": "sometimes"}, "bad GPUCOMM_NVSHMEM_PATH='sometimes'"),
                     ({"GPUCOMM_NVSHMEM_BLOCKS": "0"}, "bad GPUCOMM_NVSHMEM_BLOCKS='0'")):
        run = mpirun.script(2, STANDIN, "pingpong", "8", env=env)
        assert run.returncode == 2 and msg in run.stderr, run.stdout + run.stderr
        assert "Traceback" not in run.stderr


def test_without_nvshmem_the_payload_names_the_reason(mpirun, tmp_path):
    """The real library lookup (no stand-in library): one line, exit 3, on every rank alike."""
    run = mpirun.script(2, STANDIN, "pingpong", "8", "real-library",
                        env={"GPUCOMM_NVSHMEM_HOME": str(tmp_path)})
    assert run.returncode == 3, run.stdout + run.stderr
    assert f"NVSHMEM not usable: GPUCOMM_NVSHMEM_HOME={tmp_path} lacks include/nvshmem.h" in run.stderr
    assert "Traceback" not in run.stderr
