"""Intra-node ping-pong between two GPUs (or two host buffers), by each method of the paper.

Half round-trip time and goodput per size, every size validated; perf variables latency_8B,
goodput_1MiB, goodput_64MiB, goodput_1GiB.
"""

import reframe as rfm
from reframe.core.builtins import parameter

from gpucomm.constants import METHODS
from gpucomm.rfm import GpucommCheck


@rfm.simple_test
class PingPongCheck(GpucommCheck):
    method = parameter(list(METHODS))
    op = "pingpong"
