"""The nightly health sweep (``reframe --mode health``): per operation, one launch that runs
every method the partition offers, few sizes, time-budgeted iterations (gpucomm.health).

Perf variables ``<method>_latency_8B``, ``<method>_goodput_1MiB``, ``<method>_goodput_64MiB``;
references in config/references/<system>.yaml under HealthCheck, by partition and operation.

bw (checks/bw.py) is not swept here: the health mode must stay under 60 s on the reference node,
its sessions took 41.4-52.1 s (bench/results/2026-11-30-nvidia-h200-x2: 12-health, 15-issue8-bw),
and one more launch costs about what the ping-pong sweep's does, 9.0 s there, plus host's and
staging's 64 MiB windows (10 windows of 8 at 7.3 and 5.4 GB/s: ~1.7 s) and the compiled loop's
set-up (~1 s): 52-64 s.  The sweep runs it (SweepCheck pairs its ranks) once it fits:
add "bw" below and its HealthCheck references.

nvshmem is left out unless ``-S methods`` names it: in the sweep's short, time-budgeted runs on
the reference node its 8 B latency ranged 4-1360 us and its 64 MiB goodput 44-365 GB/s between
sessions (bench/results/2026-11-30-nvidia-h200-x2/19-nvshmem-bw), so it cannot judge a node yet.
"""

import reframe as rfm
from reframe.core.builtins import parameter

from gpucomm.rfm import SweepCheck


@rfm.simple_test
class HealthCheck(SweepCheck):
    operation = parameter(["pingpong", "allreduce", "alltoall"])
    not_by_default = {"nvshmem": "not in the health mode by default (erratic in the short sweep: "
                                 "checks/health.py); -S methods=... naming it runs it"}
