"""Intra-node all-reduce (float32 sum) and all-to-all on every GPU of the node (one rank per
GPU or GCD), by each method of the paper.

Perf variables: latency_8B (us), goodput_1MiB, goodput_64MiB, goodput_1GiB (the paper's
goodput) and busbw_1GiB (nccl-tests' bus bandwidth), GB/s; busbw_1GiB only where it is not the
goodput again (all-reduce on more than 2 ranks: gpucomm.rfm.base.copied_points).
"""

import reframe as rfm
from reframe.core.builtins import parameter

from gpucomm.constants import METHODS
from gpucomm.contract import COLLECTIVE_PERF_POINTS
from gpucomm.rfm import GpucommCheck


class _CollectiveCheck(GpucommCheck):
    method = parameter(list(METHODS))
    all_gpus = True
    sizes = "8:1G"
    perf_points = COLLECTIVE_PERF_POINTS


@rfm.simple_test
class AllReduceCheck(_CollectiveCheck):
    op = "allreduce"


@rfm.simple_test
class AllToAllCheck(_CollectiveCheck):
    op = "alltoall"
