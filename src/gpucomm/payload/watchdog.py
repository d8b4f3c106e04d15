"""A per-rank watchdog: a payload never outlives its time limit, nor its launcher.

Every rank arms its own timer, so a hang anywhere (a dead peer, a stuck NCCL kernel, an MPI
call that never returns) ends every rank: each says where it was and exits with status 124,
which makes mpirun/srun end the job.  The check's time limit feeds --timeout (rfm/base.py).

A rank also ends once its launcher is gone (its parent process changed: mpirun's prterun
killed with the ReFrame job that ran it, which leaves the ranks in process groups of their own
with parent 1), whatever the time limit, so that no rank holds its GPU past its job; and once
the process named by GPUCOMM_WATCH_PID is gone (the ReFrame run whose local job launched it,
killed with -9: its job's shell and mpirun live on, rfm.watch sets the variable).

MPI start-up is watched by another process: mpi4py holds the GIL in MPI_Init, so no thread of
the rank runs until it returns.  ``StartupSentinel`` forks before MPI_Init; it ends a rank
still in MPI_Init past the time limit or once its launcher or the watched run is gone, and,
where MPI_Init ended the rank (Open MPI's "MPI_Init failed" and "Local abort before MPI_INIT
completed"), ends the launcher if that is still there after LAUNCHER_GRACE_S (Open MPI 5's
prterun sometimes waits for ever after such an abort); a rank orphaned before it forked has
no launcher to end, and its sentinel goes with it.
"""

import os
import select
import signal
import sys
import threading
import time

from ..constants import EXIT_INTERRUPTED, EXIT_TIMEOUT, WATCH_PID_ENV
from ..contract import ERROR_PREFIX
from ..procs import process_alive

#: how long a rank that timed out waiting for its peers lets them speak before it ends the job:
#: the rank that stopped (its watchdog armed a moment later, its start-up having been slower)
#: then names itself, instead of being killed by the launcher before it can
PEER_GRACE_S = 3.0
#: seconds between two looks at the rank's parent process
PARENT_POLL_S = 0.5
#: the phase before MPI_Init returns
START_UP = "MPI start-up"
#: how long the launcher of a rank that MPI_Init ended may take to end the job by itself
LAUNCHER_GRACE_S = 5.0
#: the launchers' process names (/proc/PID/comm) that the start-up sentinel may end: mpirun's
#: and mpiexec's own processes and daemons, never a resource manager's (slurmstepd)
LAUNCHERS = ("prterun", "mpirun", "mpiexec", "orterun", "prted", "orted", "hydra_pmi_proxy")


def _say(rank, text):
    """One error line on stderr, and stdout flushed; nothing where they are gone (a launcher
    killed with its pipes): the rank must end all the same."""
    try:
        sys.stderr.write(f"{ERROR_PREFIX} rank {rank}: {text}\n")
        sys.stderr.flush()
        sys.stdout.flush()
    except (OSError, ValueError):
        pass


class Watchdog:
    def __init__(self, seconds, rank, what):
        self.seconds, self.rank, self.what = seconds, rank, what
        self.where = START_UP
        #: what the rank waits for when it is in a communication call (None: its own work)
        self.waiting = None
        self._timer = None
        self._stop = threading.Event()
        self._parent = os.getppid()
        #: "PID:START" of the run this rank must not outlive (WATCH_PID_ENV), or ''
        self._watched = os.environ.get(WATCH_PID_ENV, "")
        if seconds:  # None or 0: no limit, the watchdog only keeps track
            self._timer = threading.Timer(seconds, self._fire)
            self._timer.daemon = True

    def start(self):
        if self._timer is not None:
            self._timer.start()
        if self._parent > 1 or self._watched:  # a parent of 1 at the start: no launcher to outlive
            threading.Thread(target=self._watch_parent, daemon=True, name="gpucomm-parent").start()
        return self

    def cancel(self):
        if self._timer is not None:
            self._timer.cancel()
        self._stop.set()

    def _watch_parent(self):
        while not self._stop.wait(PARENT_POLL_S):
            if self._parent > 1 and os.getppid() != self._parent:
                _say(self.rank, f"{self.what} ended ({self.where}): its launcher (pid {self._parent}) is gone")
                os._exit(EXIT_INTERRUPTED)
            if self._watched and not process_alive(self._watched):
                pid = self._watched.partition(":")[0]
                _say(self.rank, f"{self.what} ended ({self.where}): the run that launched it "
                                f"(pid {pid}, {WATCH_PID_ENV}) is gone")
                os._exit(EXIT_INTERRUPTED)

    def _fire(self):
        if self.waiting:
            state = f"waiting in {self.waiting} for ranks that stopped answering"
        else:
            state = "this rank stopped answering (not waiting for any peer)"
        _say(self.rank, f"{self.what} timed out after {self.seconds:g} s ({self.where}): {state}")
        if self.waiting:
            time.sleep(PEER_GRACE_S)
        os._exit(EXIT_TIMEOUT)


class StartupSentinel:
    """A forked process that watches this rank's MPI_Init (see the module's docstring):
    ``start()`` before MPI_Init, ``done()`` after it."""

    def __init__(self, seconds, rank):
        self.seconds, self.rank = seconds or None, rank
        self._pid = self._fd = None

    def start(self):
        rank_pid, launcher = os.getpid(), os.getppid()
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the sentinel
            os.close(write_fd)
            try:
                self._watch(read_fd, rank_pid, launcher)
            finally:
                os._exit(0)
        os.close(read_fd)
        self._pid, self._fd = pid, write_fd
        return self

    def done(self):
        if self._fd is None:
            return
        os.write(self._fd, b"1")
        os.close(self._fd)
        os.waitpid(self._pid, 0)
        self._fd = None

    def _watch(self, fd, rank_pid, launcher):
        why = self._wait_for_init(fd, rank_pid, launcher)
        if why:  # still in MPI_Init
            _say(self.rank, f"{START_UP} {why}")
            os.kill(rank_pid, signal.SIGKILL)
            return
        if os.read(fd, 1):
            return  # MPI_Init returned
        _say(self.rank, f"{START_UP} failed: MPI_Init ended this rank (the MPI library's own "
                        "message above says why)")
        if _process_name(launcher) not in LAUNCHERS:  # none this may end (the rank was orphaned
            return                                      # before it started: its parent is init)
        deadline = time.monotonic() + LAUNCHER_GRACE_S
        while time.monotonic() < deadline:
            if not _alive(launcher):
                return
            time.sleep(0.1)
        if _process_name(launcher) in LAUNCHERS:
            _say(self.rank, f"the launcher ({_process_name(launcher)}, pid {launcher}) did not end the "
                            f"job {LAUNCHER_GRACE_S:g} s later: ending it")
            os.kill(launcher, signal.SIGKILL)

    def _wait_for_init(self, fd, rank_pid, launcher):
        """Until MPI_Init returns or ends the rank (``fd`` readable): None; else why the rank
        must end while still in it (the Watchdog's thread cannot run there): its time limit
        passed, its launcher is gone (the rank's parent changed), or the run it must not
        outlive (WATCH_PID_ENV) is gone."""
        deadline = None if self.seconds is None else time.monotonic() + self.seconds
        watched = os.environ.get(WATCH_PID_ENV, "")
        while True:
            wait = PARENT_POLL_S if deadline is None else min(PARENT_POLL_S, deadline - time.monotonic())
            if select.select([fd], [], [], max(wait, 0))[0]:
                return None
            if deadline is not None and time.monotonic() >= deadline:
                return f"timed out after {self.seconds:g} s: MPI_Init did not return"
            if launcher > 1 and _parent(rank_pid) not in (launcher, None):
                return f"ended in MPI_Init: its launcher (pid {launcher}) is gone"
            if watched and not process_alive(watched):
                return (f"ended in MPI_Init: the run that launched it (pid {watched.partition(':')[0]}, "
                        f"{WATCH_PID_ENV}) is gone")


def _parent(pid):
    """The parent pid of ``pid`` (/proc/PID/stat), None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat") as fp:
            stat = fp.read()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2:].split()[1])


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _process_name(pid) is not None


def _process_name(pid):
    """/proc/PID/comm, None where the process is gone (or a zombie: its state is Z)."""
    try:
        with open(f"/proc/{pid}/stat") as fp:
            stat = fp.read()
    except OSError:
        return None
    name, state = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:][:1]
    return None if state == "Z" else name
