"""A per-rank watchdog: a payload never outlives its time limit.

Every rank arms its own timer, so a hang anywhere (a dead peer, a stuck NCCL kernel, an MPI
call that never returns) ends every rank: each says where it was and exits with status 124,
which makes mpirun/srun end the job.  The check's time limit feeds --timeout (rfm/base.py).
"""

import os
import sys
import threading
import time

from ..constants import EXIT_TIMEOUT
from ..contract import ERROR_PREFIX

#: how long a rank that timed out waiting for its peers lets them speak before it ends the job:
#: the rank that stopped (its watchdog armed a moment later, its start-up having been slower)
#: then names itself, instead of being killed by the launcher before it can
PEER_GRACE_S = 3.0


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
        sys.stderr.write(f"{ERROR_PREFIX} rank {self.rank}: {self.what} timed out after {self.seconds:g} s "
                         f"({self.where}): {state}\n")
        sys.stderr.flush()
        sys.stdout.flush()
        if self.waiting:
            time.sleep(PEER_GRACE_S)
        os._exit(EXIT_TIMEOUT)
