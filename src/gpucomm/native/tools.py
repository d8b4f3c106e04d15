"""Where the native tools' binaries are: a directory given by the user, an environment
variable, a partition's or environment's extras, then PATH (no ReFrame here: bench/compare uses
it too)."""

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
