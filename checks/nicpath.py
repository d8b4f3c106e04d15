"""The network path of one node, per NIC: ccl and gpu-aware-mpi between two GPUs of one node
with the intra-node shortcuts off, one test case per NIC of the partition (extras['nics']);
the NCCL log must show every channel over the network (rfm.nicpath).

Perf variables msgtime_8B (us per message) and goodput_64MiB (GB/s); on Slingshot, CSCS's
loopback minimum (187 Gb/s per NIC) is the reference.
"""

import reframe as rfm
from reframe.core.builtins import parameter

from gpucomm.constants import CCL, GPU_AWARE_MPI
from gpucomm.rfm import NicPathBase


@rfm.simple_test
class NicPathCheck(NicPathBase):
    method = parameter([CCL, GPU_AWARE_MPI])
