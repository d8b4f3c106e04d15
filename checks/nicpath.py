"""The network path of one node, per NIC: ccl and gpu-aware-mpi between two GPUs of one node
with the intra-node shortcuts off, one test case per NIC of the partition (extras['nics']);
the NCCL log must show every channel over the network (rfm.nicpath).

Each NIC is driven from the GPU(s) nearest to it (extras['nics']["gpus"], the site's GPU-NIC
map).  Perf variables msgtime_8B (us per message) and goodput_64MiB (GB/s): no reference until
the first healthy runs make one (CSCS's 187 Gb/s cxi loopback figure measures raw RDMA writes,
not this).
"""

import reframe as rfm
from reframe.core.builtins import parameter

from gpucomm.constants import CCL, GPU_AWARE_MPI
from gpucomm.rfm import NicPathBase


@rfm.simple_test
class NicPathCheck(NicPathBase):
    method = parameter([CCL, GPU_AWARE_MPI])
