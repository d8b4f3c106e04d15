"""nvshmem where ranks of one host share a GPU (--allow-shared-gpu): NVSHMEM's "limited MPG"
aborts the process in its stream-ordered API (seen on one H200, NVSHMEM 3.4.5:
bench/results/2026-12-02-nvidia-h200/29-payload-interfaces), so the auto path keeps to the
kernels and an explicit stream path is refused with its reason."""

from types import SimpleNamespace

import pytest

from gpucomm.errors import CapabilityError
from gpucomm.payload.context import Placement
from gpucomm.payload.methods.nvshmem import NvshmemMethod


def _method(devices, hosts=None, path=None, monkeypatch=None):
    hosts = hosts or [0] * len(devices)
    placement = [Placement(f"h{h}", h, d, None, None) for h, d in zip(hosts, devices)]
    ctx = SimpleNamespace(comm=None, backend=SimpleNamespace(is_hip=False), rank=0,
                          nranks=len(devices), placement=placement,
                          same_host=lambda r: hosts[r] == hosts[0])
    return NvshmemMethod(ctx)


@pytest.mark.parametrize("devices,hosts,path,expect", [
    (["0000:06", "0000:06"], [0, 0], "auto", "kernel"),      # one GPU, two ranks: kernels only
    (["0000:06", "0000:07"], [0, 0], "auto", "auto"),        # a GPU each: unchanged
    (["0000:06", "0000:06"], [0, 1], "auto", "auto"),        # same bus id on two hosts: not shared
    (["0000:06", "0000:06"], [0, 0], "kernel", "kernel"),
])
def test_the_path_where_ranks_share_a_gpu(monkeypatch, devices, hosts, path, expect):
    monkeypatch.setenv("GPUCOMM_NVSHMEM_PATH", path)
    assert _method(devices, hosts).mode == expect


def test_the_stream_path_on_a_shared_gpu_is_refused(monkeypatch):
    monkeypatch.setenv("GPUCOMM_NVSHMEM_PATH", "stream")
    with pytest.raises(CapabilityError, match="limited MPG"):
        _method(["0000:06", "0000:06"])
