"""Node health and acceptance: every GPU pair of the node (one rank per GPU or GCD), ping-pong
between every ordered pair and bidirectional exchange of every pair, one pair at a time and
all disjoint pairs at once, by ipc-copy, ccl, gpu-aware-mpi and nvshmem (host: host ranks, for
CPU nodes and CI).  Fails naming each pair below its class's reference (gpucomm.rfm.pairmatrix);
``-S sizes=...`` (default 8,1M,256M) sets the sweep.

The health mode runs the pair matrix of every method but nvshmem: the health budget is 60 s per
node and nvshmem's matrix costs 8.6 s on the 2x H200 reference node (72 s for the mode with it);
nvshmem stays in the health sweeps (checks/health.py) and its pair matrix runs in acceptance.
"""

import reframe as rfm
from reframe.core.builtins import parameter, run_after

from gpucomm.rfm import PairMatrixBase


@rfm.simple_test
class PairMatrixCheck(PairMatrixBase):
    method = parameter(["ipc-copy", "ccl", "gpu-aware-mpi", "nvshmem", "host"])

    @run_after("init")
    def in_health_mode(self):
        if self.method != "nvshmem":  # see the module's docstring
            self.tags |= {"health"}  # a node with one slow pair must fail the nightly run
