"""Perf points that copy another by construction are left out of a check's perf variables."""

from gpucomm.contract import BW_PERF_POINTS, COLLECTIVE_PERF_POINTS, SCALING_PERF_POINTS
from gpucomm.rfm.base import copied_points


def test_alltoall_busbw_is_its_goodput_at_any_rank_count():
    for n in (2, 4, 8, 32):
        assert copied_points("alltoall", n, COLLECTIVE_PERF_POINTS) == {"busbw_1GiB"}
        assert copied_points("alltoall", n, SCALING_PERF_POINTS) == {"busbw_2MiB", "busbw_1GiB"}


def test_allreduce_busbw_is_its_goodput_on_two_ranks_only():
    assert copied_points("allreduce", 2, COLLECTIVE_PERF_POINTS) == {"busbw_1GiB"}
    assert copied_points("allreduce", 4, COLLECTIVE_PERF_POINTS) == set()
    assert copied_points("allreduce", 16, SCALING_PERF_POINTS) == set()


def test_points_without_a_busbw_have_no_copy():
    assert copied_points("bw", 2, BW_PERF_POINTS) == set()
    assert copied_points("no-such-op", 2, COLLECTIVE_PERF_POINTS) == set()
