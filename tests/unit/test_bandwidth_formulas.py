"""The bandwidth formulas each operation declares (constants.OPERATION_DECLS' Bandwidths) are the
paper's goodput and nccl-tests' algbw and busbw, as metrics.py's docstring writes them."""

import math

import pytest

from gpucomm import constants
from gpucomm.metrics import algbw_GBps, busbw_GBps, goodput_GBps

S, N, P, T = 1 << 20, 8, 4, 1e-3
ONE = S / T / 1e9


@pytest.mark.parametrize("op, goodput, algbw, busbw", [
    ("pingpong", S, S, S),
    ("bw", S, S, S),
    ("multi-pingpong", S * P, S, S * P),
    ("allreduce", S, S, S * 2 * (N - 1) / N),
    ("alltoall", S * (N - 1), S * N, S * N * (N - 1) / N),
    (constants.PAIR_UNI, S, S, S),
    (constants.PAIR_BIDIR, 2 * S, S, S),
])
def test_each_declared_formula(op, goodput, algbw, busbw):
    assert math.isclose(goodput_GBps(op, S, T, N, pairs=P), goodput / T / 1e9)
    assert math.isclose(algbw_GBps(op, S, T, N), algbw / T / 1e9)
    assert math.isclose(busbw_GBps(op, S, T, N, pairs=P), busbw / T / 1e9)


def test_operations_without_the_papers_goodput_say_so():
    for op in ("aggressor", "gpu-datapaths", "pair-matrix", "banana"):
        with pytest.raises(ValueError, match="unknown operation"):
            goodput_GBps(op, S, T, N)
    assert goodput_GBps("pingpong", S, 0.0, N) == float("inf") and ONE > 0
