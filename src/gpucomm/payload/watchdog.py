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
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def start(self):
        self._timer.start()
        return self

    def cancel(self):
        self._timer.cancel()

    def _fire(self):
        sys.stderr.write(f"gpucomm: error: rank {self.rank}: {self.what} timed out after {self.seconds:g} s "
                         f"({self.where}): a rank, a GPU or the interconnect hangs\n")
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(EXIT_TIMEOUT)
