"""The nightly health sweep (``reframe --mode health``): per operation, one launch that runs
every method the partition offers, few sizes, time-budgeted iterations (gpucomm.rfm.sweep).

Perf variables ``<method>_latency_8B``, ``<method>_goodput_1MiB``, ``<method>_goodput_64MiB``;
references in config/references/<system>.yaml under HealthCheck, by partition and operation.

bw (checks/bw.py) is not swept here: the health mode must stay under 60 s on the reference node,
where its sessions take 41.4-52.1 s, and one more launch costs about what the ping-pong sweep's
does, 9.0 s there, plus host's and staging's 64 MiB windows (10 windows of 8 at 7.3 and
5.4 GB/s: ~1.7 s) and the compiled loop's set-up (~1 s): 52-64 s.  The sweep runs it
(SweepCheck pairs its ranks) once it fits: add "bw" below and its HealthCheck references.

nvshmem runs in the sweeps, on a node where its ranks are not bound to one core each: bound,
NVSHMEM's proxy thread shares the rank's core and its short, time-budgeted runs are erratic on
the reference node (8 B latency 4-1360 us, 64 MiB 44-365 GB/s between sessions); unbound (the
local system's mpirun options: gpucomm.site.siteconf.local_binding_options) 2.3-2.4 us and
363-366 GB/s.
"""

import reframe as rfm
from reframe.core.builtins import parameter

from gpucomm.rfm import SweepCheck


@rfm.simple_test
class HealthCheck(SweepCheck):
    operation = parameter(["pingpong", "allreduce", "alltoall"])
