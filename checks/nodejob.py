"""Per-node acceptance as one job per node (``--mode acceptance-node``): every check of one node
that ``--mode acceptance`` selects, run in turn by one job on the node, each with its own command
lines, output files, sanity and perf variables (``<check>:<variable>``); gpucomm acceptance reads
the session as it reads the per-check one (gpucomm.rfm.nodejob, docs/acceptance.md)."""

import reframe as rfm

from gpucomm.rfm import NodeAcceptanceBase


@rfm.simple_test
class NodeAcceptanceCheck(NodeAcceptanceBase):
    pass
