"""ipc-copy's point-to-point signalling without a GPU (tests/ipc_standin.py: shared memory as
device memory, real addresses, the method's code unchanged): stream flags in push and pull
mode for ping-pong, the bw window and the pair matrix on 2 and 4 ranks, the host handshake, the fallback
when the driver has no stream memory operations, and the refusal when they were demanded."""

import json
from pathlib import Path

import pytest

from gpucomm.payload.methods.ipc_copy import OPT_IN_NOTE

STANDIN = (Path(__file__).parents[1] / "ipc_standin.py")


def _done(stdout):
    return [json.loads(ln.split(" ", 1)[1]) for ln in stdout.splitlines() if ln.startswith("GPUCOMM-DONE")]


def _records(stdout):
    return [json.loads(ln.split(" ", 1)[1]) for ln in stdout.splitlines() if ln.startswith("GPUCOMM-RESULT")]


@pytest.mark.parametrize("n,op,env,sync", [
    (2, "pingpong", {}, "stream"),
    (2, "pingpong", {"GPUCOMM_IPC_MODE": "pull"}, "stream"),
    (2, "pingpong", {"GPUCOMM_IPC_SYNC": "host"}, "host"),
    (2, "bw", {}, "stream"),
    (2, "bw", {"GPUCOMM_IPC_MODE": "pull"}, "stream"),
    (2, "bw", {"GPUCOMM_IPC_SYNC": "host"}, "host"),
    (2, "pair-matrix", {}, "stream"),
    (4, "pair-matrix", {}, "stream"),
    (4, "pair-matrix", {"GPUCOMM_IPC_MODE": "pull"}, "stream"),
])
def test_ipc_copy_signalling_moves_and_validates_data(mpirun, n, op, env, sync):
    run = mpirun.script(n, STANDIN, op, "8,4K,1M", env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    done = _done(run.stdout)
    assert len(done) == 1 and done[0]["ok"], run.stdout
    recs = _records(run.stdout)
    assert recs and all(r["validated"] and r["peer_sync"] == sync for r in recs)
    assert f"peer-sync={sync}" in run.stdout


def test_without_stream_memory_operations_auto_falls_back_to_the_host_handshake(mpirun):
    run = mpirun.script(2, STANDIN, "pingpong", "8,4K", "flags-broken")
    assert run.returncode == 0, run.stdout + run.stderr
    recs = _records(run.stdout)
    assert len(recs) == 2 and all(r["peer_sync"].startswith("host (stream flags unavailable: ") for r in recs)


def test_demanded_stream_flags_that_are_unavailable_are_a_capability_error(mpirun):
    run = mpirun.script(2, STANDIN, "pingpong", "8", "flags-broken", env={"GPUCOMM_IPC_SYNC": "stream"})
    assert run.returncode == 3, run.stdout + run.stderr
    assert "GPUCOMM_IPC_SYNC=stream: stream memory operations unavailable" in run.stderr
    assert "Traceback" not in run.stderr and not _records(run.stdout)


def test_a_bad_sync_request_is_refused(mpirun):
    run = mpirun.script(2, STANDIN, "pingpong", "8", env={"GPUCOMM_IPC_SYNC": "sometimes"})
    assert run.returncode != 0 and "bad GPUCOMM_IPC_SYNC='sometimes'" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("n,op,env,sync,graphed", [
    (2, "allreduce", {}, "stream", True),
    (3, "allreduce", {}, "stream", True),
    (2, "alltoall", {"GPUCOMM_IPC_SYNC": "stream"}, "stream", True),
    (3, "alltoall", {"GPUCOMM_IPC_SYNC": "stream"}, "stream", True),
    (3, "alltoall", {"GPUCOMM_IPC_SYNC": "stream", "STANDIN_ARGS": "--graph off"}, "stream", False),
    (2, "alltoall", {}, OPT_IN_NOTE, False),  # opt-in (ipc_copy.OPT_IN_STREAM): auto keeps the barrier
    (2, "allreduce", {"GPUCOMM_IPC_SYNC": "host"}, "host", False),
    (3, "alltoall", {"GPUCOMM_IPC_SYNC": "host"}, "host", False),
])
def test_ipc_copy_collectives_handshake_on_the_stream_and_validate(mpirun, n, op, env, sync, graphed):
    """The collectives' READY/DATA handshakes (fixed 0/1 values, cleared by the waiter) hold
    over repeated "graph" launches and sizes on 2 and 3 ranks; host signalling keeps the
    barrier path; the device-driven path warms up by its own floor, the host path by --warmup."""
    run = mpirun.script(n, STANDIN, op, "8,4K,1M", env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    recs = _records(run.stdout)
    assert len(recs) == 3 and all(r["validated"] and r["peer_sync"] == sync for r in recs), recs
    assert all(r["graph"] is graphed for r in recs)
    warm = [r["warmup"] for r in recs]
    assert warm == ([100, 100, 50] if sync == "stream" else [3, 3, 3])


def test_ipc_copy_collectives_catch_a_corrupt_byte_on_the_stream_path(mpirun):
    run = mpirun.script(2, STANDIN, "allreduce", "4K", env={"GPUCOMM_TEST_CORRUPT": "1:4096"})
    assert run.returncode == 4, run.stdout + run.stderr
    assert "all-reduce result wrong at size 4096 B" in run.stderr


def test_ipc_copy_collectives_without_stream_flags_fall_back_to_the_barrier(mpirun):
    run = mpirun.script(2, STANDIN, "allreduce", "8,4K", "flags-broken")
    assert run.returncode == 0, run.stdout + run.stderr
    recs = _records(run.stdout)
    assert len(recs) == 2 and all(r["validated"] and not r["graph"] for r in recs)
    assert all(r["peer_sync"].startswith("host (stream flags unavailable: ") for r in recs)
