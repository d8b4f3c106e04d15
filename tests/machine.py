"""Sharing this machine between tests that run at once (pytest-xdist workers, or two pytest
sessions): most tests only wait on launches and may overlap, but a test that measures time (a
latency against a reference, a slowdown ratio, a link's rate) must have the CPUs to itself, or
another test's ranks make its numbers.

A readers-writer lock on files in /tmp (fcntl.flock: released by the kernel when a process
dies, so a killed run leaves no stale lock).  Every test holds the machine shared
(``conftest._share_the_machine``); a test marked ``alone``, and a module-scoped fixture that
measures inside ``with alone():``, holds it exclusively.  The turnstile keeps a waiting measurement
from being starved: while it waits, no shared holder gets in.
"""

import contextlib
import fcntl
import os

LOCK_DIR = os.environ.get("GPUCOMM_TEST_LOCK_DIR", "/tmp")
TURNSTILE = os.path.join(LOCK_DIR, "gpucomm-tests.turnstile.lock")
MACHINE = os.path.join(LOCK_DIR, "gpucomm-tests.machine.lock")

#: the marker of a test that needs the machine to itself
MARKER = "alone"
MARKER_HELP = (f"{MARKER}: the test measures time and runs with no other test on the machine "
               "(tests/machine.py: other pytest-xdist workers wait)")


@contextlib.contextmanager
def _hold(mode):
    with open(TURNSTILE, "a") as turnstile, open(MACHINE, "a") as machine:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        try:
            fcntl.flock(machine, mode)
        finally:
            if mode == fcntl.LOCK_SH:
                fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(machine, fcntl.LOCK_UN)
            if mode == fcntl.LOCK_EX:
                fcntl.flock(turnstile, fcntl.LOCK_UN)


def shared():
    """Hold the machine with other tests that do not measure time."""
    return _hold(fcntl.LOCK_SH)


def alone():
    """Hold the machine alone (no other test of any worker runs meanwhile)."""
    return _hold(fcntl.LOCK_EX)
