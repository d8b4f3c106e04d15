"""The check that stands for every other where gpucomm's configuration is not loaded.

``reframe -c checks/ -r`` without ``-C`` (and without RFM_CONFIG_FILES) runs on ReFrame's builtin
'generic' system, where no gpucomm check is valid: ReFrame would print PASSED for 0 checks and
exit 0.  This check is valid exactly on the partitions that lack the mark of gpucomm's
configuration (constants.FEATURE_GPUCOMM, set by config/settings.py) and fails there at setup,
with one line saying how to load the configuration; under gpucomm's configuration it is never
selected.
"""

import os

import reframe as rfm
from reframe.core.builtins import run_after
from reframe.core.exceptions import ReframeError

from ..constants import FEATURE_GPUCOMM


def how_to_load(checks_dir):
    """The one line: the configuration file next to ``checks_dir`` and how to load it."""
    path = os.path.abspath(os.path.join(checks_dir, os.pardir, "config", "settings.py"))
    return (f"gpucomm's ReFrame configuration is not loaded: export RFM_CONFIG_FILES={path} "
            f"(or source {os.path.join(os.path.dirname(os.path.dirname(path)), 'env.sh')}, or "
            f"pass -C {path})")


class ConfigGuard(rfm.RunOnlyRegressionTest):
    """Fails at setup on every partition outside gpucomm's configuration."""

    valid_systems = [f"-{FEATURE_GPUCOMM}"]
    valid_prog_environs = ["*"]
    executable = "true"
    tags = {"gpucomm", "health"}
    descr = "whether gpucomm's ReFrame configuration (config/settings.py) is loaded"

    @run_after("setup")
    def not_loaded(self):
        raise ReframeError(how_to_load(self.prefix))
