"""How far this node's MPI takes device buffers, found by trying, not by its name.

A tiny MPI program (PROBE_CODE, run as ``mpirun -np 2 OPTIONS python -c PROBE_CODE``) passes
device buffers through the MPI in three stages, each validated: point-to-point (``Sendrecv``),
``Allreduce`` (float32 sum) and ``Alltoall``, at a small and a large size (eager and rendezvous
protocols).  Rank 0 prints ``GPUCOMM-GPU-AWARE <stage> ok|wrong`` after each stage, flushed, so
an MPI that crashes on device memory (a non-CUDA Open MPI segfaults in its collectives) or hangs
still tells how far it got: the probe runs in a child process group with a time limit.

The level (constants.GPU_AWARE_LEVELS) is ``full`` when every stage passed, ``p2p`` when
point-to-point did, else ``none``.  config/systems/local.py, bench/compare and bench/campaign.sh
take it through siteconf.local_gpu_aware(), which tries the candidate launch options and caches
the answer per MPI and node (probe_cached).

Fault injection for the tests (no GPU needed: ``xp="numpy"`` hands host arrays to the same code):
GPUCOMM_TEST_GPU_AWARE_PROBE=STAGE:crash|hang|wrong makes rank 0 die by SIGSEGV, hang, or send
wrong data at that stage.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from ..constants import GPU_AWARE_FULL, GPU_AWARE_NONE, GPU_AWARE_P2P, NO_MULTICAST_ENV

#: the stages, in the order they run
STAGES = ("p2p", "allreduce", "alltoall")
#: the tag of the probe's lines
TAG = "GPUCOMM-GPU-AWARE"
#: the fault-injection variable (module docstring)
FAULT_ENV = "GPUCOMM_TEST_GPU_AWARE_PROBE"
#: seconds one probe launch may take (python, mpi4py, cupy and a CUDA context on 2 ranks: ~5 s)
TIMEOUT = 60.0

PROBE_CODE = r"""
import importlib, os, signal, sys, time
from mpi4py import MPI
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
xp = importlib.import_module(sys.argv[1] if len(sys.argv) > 1 else "cupy")
cuda = getattr(xp, "cuda", None)
if cuda is not None:
    cuda.Device(rank % cuda.runtime.getDeviceCount()).use()
fault = os.environ.get("GPUCOMM_TEST_GPU_AWARE_PROBE", "").split(":")

def sync():
    if cuda is not None:
        cuda.runtime.deviceSynchronize()

def inject(stage, buf):
    if rank != 0 or fault[0] != stage:
        return
    what = fault[1] if len(fault) > 1 else "crash"
    if what == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif what == "hang":
        time.sleep(600)
    elif what == "wrong":
        buf[...] = -7

def stage(name, run):
    ok = True
    for n in (16, 1 << 20):  # eager and rendezvous
        ok = run(n) and ok
    ok = comm.allreduce(bool(ok), op=MPI.LAND)
    if rank == 0:
        print("GPUCOMM-GPU-AWARE", name, "ok" if ok else "wrong", flush=True)
    return ok

def p2p(n):
    peer_to, peer_from = (rank + 1) % size, (rank - 1) % size
    send, recv = xp.full(n, rank + 1, dtype=xp.float32), xp.zeros(n, dtype=xp.float32)
    inject("p2p", send); sync()
    comm.Sendrecv(send, dest=peer_to, recvbuf=recv, source=peer_from)
    sync()
    return bool((recv == peer_from + 1).all())

def allreduce(n):
    send, recv = xp.full(n, rank + 1, dtype=xp.float32), xp.zeros(n, dtype=xp.float32)
    inject("allreduce", send); sync()
    comm.Allreduce(send, recv, op=MPI.SUM)
    sync()
    return bool((recv == size * (size + 1) / 2).all())

def alltoall(n):
    block = max(n // size, 1)
    send = xp.repeat(xp.arange(size, dtype=xp.float32) + rank * size, block)
    recv = xp.zeros(block * size, dtype=xp.float32)
    inject("alltoall", send); sync()
    comm.Alltoall(send, recv)
    sync()
    want = xp.repeat(xp.arange(size, dtype=xp.float32) * size + rank, block)
    return bool((recv == want).all())

for name, run in (("p2p", p2p), ("allreduce", allreduce), ("alltoall", alltoall)):
    if not stage(name, run):
        break
"""


def level_of(passed: Collection[str]) -> str:
    """The level that the stages ``passed`` (a set of names) show."""
    if all(s in passed for s in STAGES):
        return GPU_AWARE_FULL
    return GPU_AWARE_P2P if "p2p" in passed else GPU_AWARE_NONE


def parse(output: str) -> tuple[set[str], set[str]]:
    """(passed, wrong): the stages rank 0 reported ok, and those it reported wrong."""
    passed: set[str] = set()
    wrong: set[str] = set()
    for line in output.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == TAG and parts[1] in STAGES:
            (passed if parts[2] == "ok" else wrong).add(parts[1])
    return passed, wrong


def probe(mpirun: str, options: Sequence[str] = (), python: str = "python3", np: int = 2, timeout: float = TIMEOUT,
          env: Mapping[str, str] | None = None, xp: str = "cupy") -> dict[str, Any]:
    """Run the probe once: {"level", "reason", "passed", "rc", "timed_out", "options"}.

    ``options`` go between ``mpirun -np N`` and the program (e.g. pml ucx with UCX preloaded).
    The launch runs in its own process group, killed whole on the time limit."""
    argv = [mpirun, "-np", str(np), *options, python, "-c", PROBE_CODE, xp]
    run_env = dict(os.environ if env is None else env)
    run_env.update(NO_MULTICAST_ENV, PYTHONUNBUFFERED="1")
    if os.geteuid() == 0:
        run_env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    timed_out, rc = False, None
    with tempfile.TemporaryDirectory(prefix="gc-gpuaware-") as tmp:
        run_env["TMPDIR"] = tmp  # the launcher's session files, none left behind
        try:
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    env=run_env, start_new_session=True)
        except OSError as exc:
            return {"level": GPU_AWARE_NONE, "reason": f"probe not started: {exc}", "passed": [],
                    "rc": None, "timed_out": False, "options": list(options)}
        try:
            out, _ = proc.communicate(timeout=timeout)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
            out, _ = proc.communicate()
    passed, wrong = parse(out or "")
    level = level_of(passed)
    failed = next((s for s in STAGES if s not in passed), None)
    if failed is None:
        reason = "device buffers passed point-to-point, Allreduce and Alltoall, validated"
    else:
        how = ("gave wrong data" if failed in wrong else
               f"timed out after {timeout:g} s" if timed_out else
               f"did not finish (mpirun rc={rc})")
        reason = f"{failed} on device buffers {how}"
        if passed:
            reason = f"{', '.join(s for s in STAGES if s in passed)} passed; " + reason
    return {"level": level, "reason": reason, "passed": [s for s in STAGES if s in passed], "rc": rc,
            "timed_out": timed_out, "options": list(options),
            "tail": "\n".join((out or "").splitlines()[-8:]) if failed else ""}


def _session_members(sid: int) -> list[int]:
    """The live (not zombie) processes of session ``sid``."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fp:
                fields = fp.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # fields[0]: the state (Z: dead, waiting to be reaped), fields[3]: the session id
        if len(fields) > 3 and fields[3] == str(sid) and fields[0] != "Z":
            pids.append(int(entry))
    return pids


def _kill_group(proc: subprocess.Popen, rounds: int = 50) -> None:
    """Kill the launch's whole session: mpirun, its daemons and every rank (a launcher may put
    its ranks in process groups of their own, never in another session).  Again until none is
    left: a launch cut during its start-up may still fork a rank after a pass."""
    for _ in range(rounds):
        pids = _session_members(proc.pid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.1)


def cache_dir() -> str:
    return os.environ.get("GPUCOMM_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "gpucomm")


def cache_key(mpirun: str, options: Sequence[str], python: str, extra: Sequence[str] = ()) -> str:
    """What the answer depends on: the MPI (path, size, time), the options, the interpreter, the
    library path, the visible GPUs and ``extra`` (e.g. the GPUs' bus ids)."""
    try:
        st = os.stat(os.path.realpath(mpirun))
        stamp: list[object] = [os.path.realpath(mpirun), st.st_size, int(st.st_mtime)]
    except OSError:
        stamp = [mpirun]
    facts = [stamp, list(options), python, os.environ.get("LD_LIBRARY_PATH", ""),
             os.environ.get("CUDA_VISIBLE_DEVICES", ""), list(extra)]
    return hashlib.sha256(json.dumps(facts).encode()).hexdigest()[:20]


def probe_cached(mpirun: str, options: Sequence[str] = (), python: str = "python3", extra: Sequence[str] = (),
                 run: Callable[..., dict[str, Any]] = probe, **kwargs: Any) -> dict[str, Any]:
    """probe(), its answer kept in cache_dir() under cache_key(); an answer from a launch that
    timed out is not kept (the next call tries again)."""
    path = os.path.join(cache_dir(), f"gpu-aware-{cache_key(mpirun, options, python, extra)}.json")
    try:
        with open(path) as fp:
            found = json.load(fp)
        if isinstance(found, dict) and "level" in found:
            return dict(found, cached=path)
    except (OSError, ValueError):
        pass
    result = run(mpirun, options, python, **kwargs)
    if not result.get("timed_out"):
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}"
            with open(tmp, "w") as fp:
                json.dump(result, fp)
            os.replace(tmp, path)
        except OSError:
            pass
    return result
