"""Inter-node checks (the paper's Figs. 7-10): multi ping-pong between two nodes, with a
placement on the network, and the scaling of all-to-all and all-reduce over node counts.

* MultiPingPongCheck: rank i of node A ping-pongs with rank i of node B, all pairs at once
  (``pairs=all``: one rank per GPU/GCD, or 2 on a node without GPUs; ``pairs=single``: one pair);
  goodput is the per-node aggregate.  ``-S placement=same-switch|different-switch|
  different-group|any`` (default same-switch, Fig. 7's), ``-S nodelist=...`` for given nodes;
  the run fails if Slurm reports the nodes elsewhere.  Host buffers (method host) are the
  paper's "MPI (host mem. buffers)" baseline.
* AllToAllScalingCheck (2 MiB blocks, Fig. 9) and AllReduceScalingCheck (1 GiB, Fig. 10): ccl and
  gpu-aware-mpi on every GPU of 2, 4, ... nodes, up to ``-S max_nodes=N`` (8; 512 in the paper
  mode).

On one machine, ``-S emulate_nodes=y`` runs the nodes as groups of ranks (the payload's
--ranks-per-node), e.g. ``-S ranks_per_node=1`` for 2 ranks as 2 "nodes" x 1 GPU.
"""

import reframe as rfm
from reframe.core.builtins import parameter, run_after, variable

from gpucomm.constants import METHODS
from gpucomm.contract import SCALING_PERF_POINTS
from gpucomm.rfm import GpucommCheck

#: node counts of the scaling checks (the paper's Figs. 9/10: 2 to 512)
NODE_COUNTS = [2 ** i for i in range(1, 10)]


@rfm.simple_test
class MultiPingPongCheck(GpucommCheck):
    method = parameter(list(METHODS))
    pairs = parameter(["all", "single"])
    op = "multi-pingpong"
    num_nodes = 2
    placement = "same-switch"

    @run_after("init")
    def set_pairs(self):
        self.all_gpus = self.pairs == "all"


class _ScalingCheck(GpucommCheck):
    method = parameter(["ccl", "gpu-aware-mpi"])
    nodes = parameter(NODE_COUNTS)
    #: the largest node count generated (the others are not)
    max_nodes = variable(int, value=8)
    #: the one size measured (replaces ``sizes``, which a mode may set for every check)
    size = variable(str)
    all_gpus = True
    perf_points = SCALING_PERF_POINTS

    @run_after("init")
    def set_scale(self):
        self.skip_if(self.nodes > self.max_nodes, f"{self.nodes} nodes > max_nodes={self.max_nodes}")
        self.num_nodes = self.nodes
        self.sizes = self.size


@rfm.simple_test
class AllToAllScalingCheck(_ScalingCheck):
    op = "alltoall"
    size = "2M"


@rfm.simple_test
class AllReduceScalingCheck(_ScalingCheck):
    op = "allreduce"
    size = "1G"
