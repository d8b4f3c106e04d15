"""Fault injection for the tests: every GPUCOMM_TEST_* hook, read and checked here.

* GPUCOMM_TEST_CORRUPT=RANK:SIZE    damages one received byte of that rank at that size;
* GPUCOMM_TEST_CORRUPT_EVERY=K      makes that damage intermittent: after every timed sample
  that holds a multiple of K among its iterations (payload.soak), not once after the last;
* GPUCOMM_TEST_HANG=RANK:SIZE       that rank stops answering there (with
  GPUCOMM_TEST_HANG_EXIT set: it exits at once, a killed rank);
* GPUCOMM_TEST_SLOW_PAIR=I:J:SECONDS  the pair matrix's degraded link: rank I sleeps SECONDS in
  every timed iteration it shares with rank J (ping-pong I->J, not J->I; the bidirectional
  exchange and concurrent rounds of I and J);
* GPUCOMM_TEST_IPC_REFUSED=RANK     opening the peers' IPC handles fails on that rank as the
  driver's refusal would (ipc-copy).

A malformed value is an error, never ignored; the slow pair is named in the output's header and
JSON meta, the others in the error they cause.
"""

import os

from ..constants import (
    TEST_CORRUPT as CORRUPT,
    TEST_CORRUPT_EVERY as CORRUPT_EVERY,
    TEST_HANG as HANG,
    TEST_HANG_EXIT as HANG_EXIT,
    TEST_HOOK_SCOPE,
    TEST_IPC_REFUSED as IPC_REFUSED,
    TEST_SLOW_PAIR as SLOW_PAIR,
)
from ..errors import GpucommError, collective


def _rank_size(var):
    spec = os.environ.get(var, "")
    if not spec:
        return None
    try:
        rank, size = spec.split(":")
        return int(rank), int(size)
    except ValueError:
        raise collective(GpucommError(f"bad {var}={spec!r}: expected RANK:SIZE")) from None


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
    slow = slow_pair_request()
    if slow is not None and max(slow[:2]) >= nranks:
        raise collective(GpucommError(f"{SLOW_PAIR}: ranks {slow[0]} and {slow[1]} do not both "
                                      f"exist (ranks 0-{nranks - 1})"))
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
