"""Intra-node unidirectional bandwidth between two GPUs (or two host buffers), by each method of
the paper: osu_bw's operation (payload ``bw``: a window of messages one way, then one short
acknowledgement back; the time per message, goodput = size / time), every size validated.

A window of 8 messages, as bench/compare's ``osu_bw -W 8`` and the references (``-S window=N``;
0: the payload's 64, osu_bw's default).  Perf variables msgtime_8B (us per message),
goodput_64MiB, goodput_256MiB, goodput_1GiB (GB/s); a goodput above the link's nominal bandwidth
is rejected by the payload, as for the ping-pong.
"""

import reframe as rfm
from reframe.core.builtins import parameter

from gpucomm.constants import BW, METHODS
from gpucomm.contract import BW_PERF_POINTS
from gpucomm.rfm import GpucommCheck


@rfm.simple_test
class BwCheck(GpucommCheck):
    method = parameter(list(METHODS))
    op = BW
    window = 8
    perf_points = BW_PERF_POINTS
