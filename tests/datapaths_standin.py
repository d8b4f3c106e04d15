"""The GPU data-path operation with host memory standing in for each rank's GPU: a backend that
says it is a device, a runtime whose copies are memmove and whose kernels copy in numpy, events
read from the host clock.  What it runs is the operation's own logic on several ranks without a
GPU: cases (every GPU alone, all at once), validation, the records, the hooks.
Usage: mpirun -np N python datapaths_standin.py [payload options after the operation]"""

import ctypes
import sys
import time
import types

import numpy as np

from gpucomm.payload import cli, engine
from gpucomm.payload.backend import NumpyBackend


class DevArray(np.ndarray):
    """A host array with cupy's ``.data.ptr``."""

    @property
    def data(self):
        return types.SimpleNamespace(ptr=self.ctypes.data)


class Stream:
    ptr = 0

    def __init__(self, non_blocking=True):
        pass

    def synchronize(self):
        pass

    def wait_event(self, event):
        pass


class Event:
    def __init__(self, disable_timing=False):
        self.t = None

    def record(self, stream=None):
        self.t = time.perf_counter()

    def synchronize(self):
        pass


def _copy(dst, src, nbytes):
    ctypes.memmove(int(dst), int(src), int(nbytes))


class RawModule:
    def __init__(self, code):
        self.code = code

    def get_function(self, name):
        def copy16(grid, block, args, stream=None):
            src, dst, n = args
            _copy(dst, src, n * 16)

        def bidir16(grid, block, args, stream=None):
            h_src, d_dst, d_src, h_dst, n = args
            _copy(d_dst, h_src, n * 16)
            _copy(h_dst, d_src, n * 16)
        return {"copy16": copy16, "bidir16": bidir16}[name]


class Runtime:
    memcpyDefault = 4

    @staticmethod
    def memcpyAsync(dst, src, nbytes, kind, stream):
        _copy(dst, src, nbytes)

    @staticmethod
    def hostRegister(ptr, size, flags):
        pass

    @staticmethod
    def getDeviceProperties(device):
        return {"multiProcessorCount": 2}

    @staticmethod
    def deviceGetAttribute(attr, device):
        raise RuntimeError("no such attribute here")

    @staticmethod
    def memGetInfo():
        return 1 << 34, 1 << 34


class StandInGpu(NumpyBackend):
    name = "cupy"
    is_device = True
    is_hip = False
    runtime = Runtime
    xp = types.SimpleNamespace(cuda=types.SimpleNamespace(
        Stream=Stream, Event=Event, get_elapsed_time=lambda a, b: (b.t - a.t) * 1e3), RawModule=RawModule)

    def __init__(self, device=None):
        self.device = device or 0
        self.stream = Stream()

    def empty(self, nbytes, dtype=np.uint8):
        return np.zeros(nbytes // np.dtype(dtype).itemsize, dtype=dtype).view(DevArray)

    def free_bytes(self, sharers=1):
        return 1 << 34

    def pci_bus_id(self):
        return f"0000:{self.device + 0x19:02x}:00.0"

    def describe(self):
        return {"backend": "standin", "device": self.device, "pci_bus_id": self.pci_bus_id(),
                "name": "host memory standing in for a GPU"}


if __name__ == "__main__":
    engine.make_backend = lambda name, device: StandInGpu(device)
    sys.exit(cli.main(["gpu-datapaths", "--method", "staging", "--backend", "cupy", "--iters", "20",
                       *sys.argv[1:]]))
