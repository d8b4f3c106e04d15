"""The warm-up floor of ipc-copy's device-driven collectives (Method.min_warmup, which the engine
raises a size's warm-up to): by size, only on the device-driven collectives, 0 elsewhere."""

from types import SimpleNamespace

from gpucomm.payload.methods.base import Method
from gpucomm.payload.methods.ipc_copy import IpcCopyMethod, warmup_floor


def test_the_floor_falls_with_the_size():
    assert [warmup_floor(n) for n in (8, 64 << 10, 1 << 20, 64 << 20)] == [100, 100, 50, 10]


def test_only_the_device_driven_collectives_raise_the_warm_up():
    ctx = SimpleNamespace(comm=None, backend=None)
    plain = Method(ctx)
    ipc = IpcCopyMethod(ctx)
    assert plain.min_warmup(8) == 0 and ipc.min_warmup(8) == 0  # point-to-point, host path
    ipc.graph_capable = True  # set by setup for a collective signalled through stream flags
    assert ipc.min_warmup(8) == 100 and ipc.min_warmup(64 << 20) == 10
