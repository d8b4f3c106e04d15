"""The inter-node checks with host buffers on CPU nodes, for real multi-node Slurm clusters
without GPUs (the `ci` system's 4-node cluster of .ci/cluster-up.sh, partition ci:cluster).
Kept out of checks/ itself (load with ``-c checks/cluster/``) because they only make sense where
the nodes are real Slurm nodes:

* HostAllToAllScalingCheck, HostAllReduceScalingCheck: checks/internode.py's scaling checks
  (same node counts, sizes and perf variables) with method ``host``, one rank per node;
* NodePairMatrixCheck: the pair matrix (rfm.PairMatrixBase) with one rank on each of
  ``num_nodes`` nodes (default 4), every pair a pair of nodes, named by its nodes
  (``uni_256KiB_gcn4-gcn1``); references per switch distance (same-switch, different-switch) in
  config/references/<system>.yaml under NodePairMatrixCheck.  Tagged ``health``: the nightly
  run (``--mode health``) fails naming the slow node pair.

The multi ping-pong needs nothing of its own: checks/internode.py's MultiPingPongCheck with
``-t '^host$' -S ranks_per_node=1`` (1 rank per node; the nodes are small).
"""

import os

import reframe as rfm
from reframe.core.builtins import parameter
from reframe.utility import import_module_from_file

from gpucomm.constants import HOST
from gpucomm.rfm import PairMatrixBase

_internode = import_module_from_file(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "internode.py"))


@rfm.simple_test
class HostAllToAllScalingCheck(_internode.AllToAllScalingCheck):
    method = parameter([HOST])
    ranks_per_node = 1


@rfm.simple_test
class HostAllReduceScalingCheck(_internode.AllReduceScalingCheck):
    method = parameter([HOST])
    ranks_per_node = 1


@rfm.simple_test
class NodePairMatrixCheck(PairMatrixBase):
    method = parameter([HOST])
    num_nodes = 4
    ranks_per_node = 1
    #: small sizes, 2 warm-up iterations and a time budget per size (as the health mode): the
    #: nodes' links can be slow (the CI cluster's inter-switch links: 50 Mbit/s, 40 ms per 256 KiB)
    sizes = "8,256K"
    perf_sizes = "256K"
    budget = 0.25
    warmup = 2

    def more_tags(self):
        return super().more_tags() | {"health"}  # a slow node pair must fail the nightly run
