"""A per-rank watchdog: a payload never outlives its time limit.

Every rank arms its own timer, so a hang anywhere (a dead peer, a stuck NCCL kernel, an MPI
call that never returns) ends every rank: each says where it was and exits with status 124,
which makes mpirun/srun end the job.  The check's time limit feeds --timeout (see rfm.py).
"""

import os
import sys
import threading

from ..constants import EXIT_TIMEOUT


class Watchdog:
    def __init__(self, seconds, rank, what):
        self.seconds, self.rank, self.what = seconds, rank, what
        self.where = "start-up"
        #: what the rank waits for when it is in a communication call (None: its own work)
        self.waiting = None
        self._timer = None
        if seconds:  # None or 0: no limit, the watchdog only keeps track
            self._timer = threading.Timer(seconds, self._fire)
            self._timer.daemon = True

    def start(self):
        if self._timer is not None:
            self._timer.start()
        return self

    def cancel(self):
        if self._timer is not None:
            self._timer.cancel()

    def _fire(self):
        if self.waiting:
            state = f"waiting in {self.waiting} for ranks that stopped answering"
        else:
            state = "this rank stopped answering (not waiting for any peer)"
        sys.stderr.write(f"gpucomm: error: rank {self.rank}: {self.what} timed out after {self.seconds:g} s "
                         f"({self.where}): {state}\n")
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(EXIT_TIMEOUT)
