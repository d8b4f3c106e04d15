"""Where the native tools' binaries are: a directory given by the user, an environment
variable, a partition's or environment's extras, then PATH (no ReFrame here: bench/compare uses
it too); an extras value ``{"job": DIR}`` names a directory that exists only where the job runs
(Alps: the uenv's view), searched by the job itself (job_lookup)."""

import os
import shutil

from ..constants import Extras

#: tool -> (environment variable, extras key) naming the directory of its binaries
TOOL_DIRS = {"osu": ("GPUCOMM_OSU_DIR", Extras.OSU_DIR),
             "nccl-tests": ("GPUCOMM_NCCL_TESTS_DIR", Extras.NCCL_TESTS_DIR)}


def find_binary(name, dirs, max_depth=6):
    """The first executable ``name`` under one of ``dirs`` (searched a few levels deep), else on PATH."""
    for top in filter(None, dirs):
        top = os.path.expanduser(top)
        if os.path.isfile(os.path.join(top, name)) and os.access(os.path.join(top, name), os.X_OK):
            return os.path.join(top, name)
        base = top.rstrip(os.sep).count(os.sep)
        for root, subdirs, files in os.walk(top):
            if name in files and os.access(os.path.join(root, name), os.X_OK):
                return os.path.join(root, name)
            if root.count(os.sep) - base >= max_depth:
                subdirs[:] = []
    return shutil.which(name)


#: what a job prints where a tool directory that exists only in the job lacks the tool
MISSING_TAG = "GPUCOMM-TOOL-MISSING"
#: the shell variable holding the binary the job found
JOB_TOOL_VAR = "GPUCOMM_TOOL"


def job_lookup(name, dirs, max_depth=6):
    """Shell lines that find ``name`` under ``dirs`` in the job (as find_binary does here) into
    $GPUCOMM_TOOL, or print the MISSING_TAG line and end the job."""
    where = " ".join(f"'{d}'" for d in dirs)
    return [f"{JOB_TOOL_VAR}=$(find -L {where} -maxdepth {max_depth} -type f -name '{name}' -perm -u+x "
            "2>/dev/null | head -n 1)",
            f'[ -n "${JOB_TOOL_VAR}" ] || {{ echo "{MISSING_TAG} {name} not found under {" ".join(dirs)} '
            'on $(hostname)"; exit 1; }']
