"""One ReFrame run per stage directory (a ReFrame plugin of every gpucomm check).

ReFrame wipes a test's stage directory when it sets the test up (``clean_stagedir``), and two runs
with the same prefix and no ``--timestamp`` use the same directories: a second run started while
the first is under way deletes the first one's job files and results, and the first then fails
with "the payload crashed or was killed" while the second overwrites its output.  The modes that
keep results (config/modes.py) give every run its own ``stage/<timestamp>-<pid>/``; this plugin
covers the other runs: before the first of its tests is set up, a ReFrame process takes an
exclusive ``flock`` on ``<stage prefix>/.gpucomm-run.lock`` (held until the process ends, so that a
killed run frees it too).  Where another live process holds it, every gpucomm test of the second
run fails at setup with the holder's pid and the way out, and nothing of the first run is touched.
A stage or output prefix with white space in it fails every test at setup too, naming it:
ReFrame's local job launch splits the job script's path there ("No such file or directory").
"""

import fcntl
import os

import reframe.core.runtime as rt
from reframe.core.builtins import run_before
from reframe.core.exceptions import ReframeError
from reframe.core.pipeline import RegressionTestPlugin

LOCK_NAME = ".gpucomm-run.lock"

#: stage prefix -> the open lock file (held for the life of this process), or the refusal
_CLAIMS = {}


def claim(prefix):
    """'' once this process holds ``prefix``'s run lock, else why it cannot (the holder's pid)."""
    if prefix in _CLAIMS:
        held = _CLAIMS[prefix]
        return held if isinstance(held, str) else ""
    os.makedirs(prefix, exist_ok=True)
    path = os.path.join(prefix, LOCK_NAME)
    fp = open(path, "a+")
    try:
        fcntl.flock(fp, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fp.seek(0)
        holder = fp.read().strip() or "unknown"
        fp.close()
        _CLAIMS[prefix] = (f"another ReFrame run (pid {holder}) is using the stage directory "
                           f"{prefix}: give each concurrent run its own --prefix, or use a mode "
                           "(--mode health, acceptance, paper: their directories are per run)")
        return _CLAIMS[prefix]
    _CLAIMS[prefix] = fp  # held from here on: a second claim of this process must not lock again
    try:
        fp.seek(0)
        fp.truncate()
        fp.write(f"{os.getpid()}\n")
        fp.flush()
    except OSError:  # a full disk: the lock holds all the same (a refused run says "pid unknown")
        pass
    return ""


class RunLock(RegressionTestPlugin):
    """Fails the test at setup where another live ReFrame run holds its stage prefix."""

    @run_before("setup")
    def claim_stage_prefix(self):
        runtime = rt.runtime()
        for what, prefix in (("stage", runtime.stage_prefix), ("output", runtime.output_prefix)):
            if any(c.isspace() for c in prefix):
                raise ReframeError(f"the {what} directory {prefix!r} has white space in it, which ReFrame's "
                                   "job launch splits: give a --prefix without spaces")
        refused = claim(runtime.stage_prefix)
        if refused:
            raise ReframeError(refused)
