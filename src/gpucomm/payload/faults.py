"""Fault injection for the tests: every GPUCOMM_TEST_* hook, read and checked here.

* GPUCOMM_TEST_CORRUPT=RANK:SIZE    damages one received byte of that rank at that size;
* GPUCOMM_TEST_CORRUPT_EVERY=K      makes that damage intermittent: after every timed sample
  that holds a multiple of K among its iterations (payload.soak), not once after the last;
* GPUCOMM_TEST_HANG=RANK:SIZE       that rank stops answering there (with
  GPUCOMM_TEST_HANG_EXIT set: it exits at once, a killed rank);
* GPUCOMM_TEST_SLOW_PAIR=I:J:SECONDS  the pair matrix's degraded link: rank I sleeps SECONDS in
  every timed iteration it shares with rank J (ping-pong I->J, not J->I; the bidirectional
  exchange and concurrent rounds of I and J);
* GPUCOMM_TEST_SLOW_GPU=IDX:FACTOR  the data-path operation's slowed GPU: GPU (rank) IDX's times
  are 1/FACTOR of what they were (its bandwidth FACTOR of its own, 0 < FACTOR < 1), named in the
  meta; the check's references fail it, naming the GPU;
* GPUCOMM_TEST_SLOW_NODE=HOST[,HOST]:FACTOR  a slow node (acceptance's peer comparison): every
  rank on one of those hosts (its hostname, or the name's first label) busy-waits after each
  timed sample, inside the sample, for FACTOR - 1 times the sample's own time, so that every
  operation and method there (latency and bandwidth alike) takes FACTOR times as long, and the
  peers of a multi-node run wait for it; on other hosts it does nothing, so that one value set
  for a whole session slows one node's jobs only;
* GPUCOMM_TEST_IPC_REFUSED=RANK     opening the peers' IPC handles fails on that rank as the
  driver's refusal would (ipc-copy).

A malformed value is an error, never ignored, and so is a hook that cannot fire in the run
(check_requests before it, check_fired and payload.soak after it); the slow pair and the slow
node are named in the output's header and JSON meta (test_hook; the slow node also where it
names none of the run's hosts, test_hook_idle: one job of a distributed session is meant), the
others in the error they cause.
"""

import os
import time

from ..constants import (
    TEST_CORRUPT as CORRUPT,
    TEST_CORRUPT_EVERY as CORRUPT_EVERY,
    TEST_HANG as HANG,
    TEST_HANG_EXIT as HANG_EXIT,
    TEST_HOOK_SCOPE,
    TEST_IPC_REFUSED as IPC_REFUSED,
    TEST_SLOW_GPU as SLOW_GPU,
    TEST_SLOW_NODE as SLOW_NODE,
    TEST_SLOW_PAIR as SLOW_PAIR,
)
from ..errors import GpucommError, collective
from ..sizes import parse_size


def _rank_size(var):
    spec = os.environ.get(var, "")
    if not spec:
        return None
    try:
        rank, size = spec.split(":")
        return int(rank), parse_size(size)
    except (ValueError, GpucommError):
        raise collective(GpucommError(f"bad {var}={spec!r}: expected RANK:SIZE (a size as --sizes "
                                      "takes it, e.g. 1:4096 or 1:64M)")) from None


def corruption_request():
    """(rank, size) of GPUCOMM_TEST_CORRUPT, or None."""
    return _rank_size(CORRUPT)


def corrupt_every_request():
    """K of GPUCOMM_TEST_CORRUPT_EVERY, or None; it needs GPUCOMM_TEST_CORRUPT (whose data)."""
    spec = os.environ.get(CORRUPT_EVERY, "")
    if not spec:
        return None
    if not spec.isdigit() or int(spec) < 1:
        raise collective(GpucommError(f"bad {CORRUPT_EVERY}={spec!r}: expected a positive integer"))
    if corruption_request() is None:
        raise collective(GpucommError(f"{CORRUPT_EVERY}={spec} needs {CORRUPT}=RANK:SIZE "
                                      "(whose received data, at which size)"))
    return int(spec)


def hang_request():
    """(rank, size) of GPUCOMM_TEST_HANG, or None."""
    return _rank_size(HANG)


def hang_exits():
    return bool(os.environ.get(HANG_EXIT))


#: the method-bound hooks (TEST_HOOK_SCOPE) this rank has fired (fire)
_FIRED = set()


def fire(hook):
    """Note that ``hook`` took effect on this rank (check_fired reads it)."""
    _FIRED.add(hook)


def check_fired(comm, status):
    """Collective, after every method ran or was skipped (``status``: method -> "ok" or
    "skipped: why"): a hook bound to methods (TEST_HOOK_SCOPE) that took effect on no rank is
    an error naming why, e.g. GPUCOMM_TEST_IPC_REFUSED in a sweep whose ipc-copy was skipped."""
    fired = set().union(*comm.allgather(sorted(_FIRED)))
    for hook, (where_methods, _) in TEST_HOOK_SCOPE.items():
        value = os.environ.get(hook)
        if not value or not where_methods or hook in fired:
            continue
        why = "; ".join(f"{m}: {status[m]}" for m in where_methods if m in status) or "none of them ran"
        raise collective(GpucommError(f"{hook}={value} did not fire: it needs --method "
                                      f"{', '.join(where_methods)} ({why})"))


def slow_pair_request():
    """(i, j, seconds) of GPUCOMM_TEST_SLOW_PAIR, or None."""
    spec = os.environ.get(SLOW_PAIR, "")
    if not spec:
        return None
    try:
        i, j, delay = spec.split(":")
        i, j, delay = int(i), int(j), float(delay)
        if i == j or min(i, j) < 0 or not 0 < delay <= 10:
            raise ValueError
    except ValueError:
        raise collective(GpucommError(f"bad {SLOW_PAIR}={spec!r}: expected I:J:SECONDS, "
                                      "I != J ranks, 0 < SECONDS <= 10")) from None
    return i, j, delay


def slow_gpu_request():
    """(gpu index, factor) of GPUCOMM_TEST_SLOW_GPU, or None."""
    spec = os.environ.get(SLOW_GPU, "")
    if not spec:
        return None
    try:
        idx, factor = spec.split(":")
        idx, factor = int(idx), float(factor)
        if idx < 0 or not 0 < factor < 1:
            raise ValueError
    except ValueError:
        raise collective(GpucommError(f"bad {SLOW_GPU}={spec!r}: expected IDX:FACTOR, a GPU index "
                                      "and 0 < FACTOR < 1")) from None
    return idx, factor
#: the slow node's largest FACTOR (a node 100 times slower is a dead one: other hooks say that)
SLOW_NODE_MAX = 100.0


def slow_node_request():
    """(hosts, factor) of GPUCOMM_TEST_SLOW_NODE, or None."""
    spec = os.environ.get(SLOW_NODE, "")
    if not spec:
        return None
    try:
        hosts, factor = spec.rsplit(":", 1)
        hosts, factor = tuple(hosts.split(",")), float(factor)
        if not all(h.strip() == h and h for h in hosts) or not 1 < factor <= SLOW_NODE_MAX:
            raise ValueError
    except ValueError:
        raise collective(GpucommError(f"bad {SLOW_NODE}={spec!r}: expected HOST[,HOST]:FACTOR, "
                                      f"1 < FACTOR <= {SLOW_NODE_MAX:g}")) from None
    return hosts, factor


def slow_node_factor(host, request):
    """FACTOR where ``request`` (slow_node_request's) names ``host`` (or its first label), else 1."""
    if request is None:
        return 1.0
    hosts, factor = request
    return factor if host in hosts or host.split(".")[0] in hosts else 1.0


def slow_node_meta(hosts_of_ranks, request):
    """{'test_hook' or 'test_hook_idle': what the slow node does in this run} ({} if unset)."""
    if request is None:
        return {}
    spec = f"{SLOW_NODE}={os.environ[SLOW_NODE]}"
    slow = sorted({h for h in hosts_of_ranks if slow_node_factor(h, request) > 1})
    if slow:
        return {"test_hook": f"{spec}: every timed sample on {','.join(slow)} {request[1]:g}x as long "
                             "(a busy wait)"}
    return {"test_hook_idle": f"{spec}: names none of this run's hosts "
                              f"({','.join(sorted(set(hosts_of_ranks)))}): not fired"}


def busy_wait(seconds):
    """Spin (never sleep: the core stays busy, as a slow node's would) for ``seconds``; the
    seconds it took."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        pass
    return time.perf_counter() - t0


def check_scope(methods, op):
    """Every hook that is set must be one that this run's methods or operation can fire
    (constants.TEST_HOOK_SCOPE): GPUCOMM_TEST_SLOW_PAIR in a ping-pong would test nothing."""
    for hook, (where_methods, where_ops) in TEST_HOOK_SCOPE.items():
        value = os.environ.get(hook)
        if not value:
            continue
        if where_ops and op not in where_ops:
            raise collective(GpucommError(f"{hook}={value} fires only in {', '.join(where_ops)}, "
                                          f"not {op}: unset it"))
        if where_methods and not set(methods) & set(where_methods):
            raise collective(GpucommError(f"{hook}={value} fires only with --method "
                                          f"{', '.join(where_methods)}, not {','.join(methods)}: unset it"))


def check_requests(nranks, sizes, methods, op):
    """Every hook that is set must be able to fire in this run: this run's methods or operation
    (check_scope), its ranks exist, its size is swept (a hook that cannot fire would test
    nothing and say nothing)."""
    check_scope(methods, op)
    for var, req in ((CORRUPT, corruption_request()), (HANG, hang_request())):
        if req is not None:
            rank, size = req
            if not 0 <= rank < nranks:
                raise collective(GpucommError(f"{var}={rank}:{size}: there is no rank {rank} "
                                              f"(ranks 0-{nranks - 1})"))
            if size not in sizes:
                raise collective(GpucommError(f"{var}={rank}:{size}: size {size} is not swept "
                                              f"(--sizes: {', '.join(map(str, sizes))})"))
    corrupt_every_request()
    slow_node_request()
    if hang_exits() and hang_request() is None:
        raise collective(GpucommError(f"{HANG_EXIT}={os.environ[HANG_EXIT]} needs {HANG}=RANK:SIZE "
                                      "(which rank exits, at which size)"))
    slow = slow_pair_request()
    if slow is not None and max(slow[:2]) >= nranks:
        raise collective(GpucommError(f"{SLOW_PAIR}: ranks {slow[0]} and {slow[1]} do not both "
                                      f"exist (ranks 0-{nranks - 1})"))
    gpu = slow_gpu_request()
    if gpu is not None and gpu[0] >= nranks:
        raise collective(GpucommError(f"{SLOW_GPU}: there is no GPU {gpu[0]} (one rank per GPU: "
                                      f"0-{nranks - 1})"))
    hook = os.environ.get(IPC_REFUSED, "")
    if hook and not hook.isdigit():
        raise collective(GpucommError(f"bad {IPC_REFUSED}={hook!r}: expected a rank"))
    if hook.isdigit() and int(hook) >= nranks:
        raise collective(GpucommError(f"{IPC_REFUSED}={hook}: there is no rank {hook} "
                                      f"(ranks 0-{nranks - 1})"))


def ipc_refused(rank):
    """Whether GPUCOMM_TEST_IPC_REFUSED names ``rank``."""
    hook = os.environ.get(IPC_REFUSED, "")
    if hook and not hook.isdigit():
        raise GpucommError(f"bad {IPC_REFUSED}={hook!r}: expected a rank")
    return hook == str(rank)
