"""A check's run records the software it used (a ReFrame plugin of every gpucomm check).

``software`` (contract.SOFTWARE_FIELD, loggable: in every test case of the session's report)
holds the versions the run's own results name: gpucomm's, the MPI library's, the GPU driver's
and runtime's (the payload's meta), e.g. "gpucomm 0.1.0; mpi Open MPI v5.0.7; driver 13000".
The nightly drift keys a node's history by it with the environment and the modules
(analysis.inputs.software_of): a new MPI or driver starts a new history, a new run does not.
"""

import json
import os

from reframe.core.builtins import run_after, variable
from reframe.core.pipeline import RegressionTestPlugin

from .. import __version__
from ..contract import NOISE_FILES, RESULTS_FILE

#: the payload meta's keys of versions, in the order the record names them
VERSION_KEYS = ("mpi", "driver", "runtime")


def versions(stagedir: str) -> str:
    """'gpucomm V; mpi M; driver D; runtime R' from the first results file of the run that has
    a meta (the payload's, a native tool's, a noise job's quiet run); gpucomm's own where none."""
    meta: dict = {}
    for name in (RESULTS_FILE, *NOISE_FILES.values()):
        try:
            with open(os.path.join(stagedir, name)) as fp:
                meta = json.load(fp).get("meta") or {}
        except (OSError, ValueError, AttributeError):
            continue
        if meta:
            break
    parts = [f"gpucomm {meta.get('gpucomm') or __version__}"]
    parts += [f"{key} {meta[key]}" for key in VERSION_KEYS if meta.get(key) not in (None, "")]
    return "; ".join(parts)


class SoftwareRecord(RegressionTestPlugin):
    """Sets ``software`` after the run (see the module's docstring)."""

    #: the versions the run used (contract.SOFTWARE_FIELD)
    software = variable(str, value="", loggable=True)

    @run_after("run")
    def record_software(self):
        self.software = versions(self.stagedir)
