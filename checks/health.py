"""The nightly health sweep (``reframe --mode health``): per operation, one launch that runs
every method the partition offers, few sizes, time-budgeted iterations (gpucomm.health).

Perf variables ``<method>_latency_8B``, ``<method>_goodput_1MiB``, ``<method>_goodput_64MiB``;
references in config/references/<system>.yaml under HealthCheck, by partition and operation.
"""

import reframe as rfm
from reframe.core.builtins import parameter

from gpucomm.rfm import SweepCheck


@rfm.simple_test
class HealthCheck(SweepCheck):
    operation = parameter(["pingpong", "allreduce", "alltoall"])
