"""A local job's payload ends with the ReFrame run that launched it (a ReFrame plugin of every
gpucomm check).

ReFrame cancels its jobs when it is stopped (SIGTERM, Ctrl-C), but a ``kill -9`` of reframe
leaves a local scheduler's job running with parent 1: its shell, mpirun and the ranks, until
the payload's watchdog limit (``-S time_limit=0``: constants.PAYLOAD_TIMEOUT_CEILING_S), holding
the node's GPUs for the next run.  Under the local scheduler the check names its ReFrame process in GPUCOMM_WATCH_PID
(procs.process_token: pid and start time, so that a reused pid is not taken for it), and the
payload's watchdog ends every rank within a second once that process is gone.  A batch
scheduler's job (Slurm) is the scheduler's to end: it is left alone, as ReFrame leaves it.
"""

import os

from reframe.core.builtins import run_before
from reframe.core.pipeline import RegressionTestPlugin

from ..constants import WATCH_PID_ENV
from ..procs import process_token


class WatchRun(RegressionTestPlugin):
    """Sets GPUCOMM_WATCH_PID for a job of the local scheduler (see the module's docstring)."""

    @run_before("run")
    def watch_this_run(self):
        if self.current_partition.scheduler.registered_name == "local":
            self.env_vars[WATCH_PID_ENV] = process_token(os.getpid())
