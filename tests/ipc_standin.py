"""The ipc-copy method without a GPU: every rank's "device memory" is a shared-memory file,
an IPC handle names the file, a "copy engine" memmoves between mapped addresses at once, and
the stream flags are plain 32-bit stores and a polling wait, a side stream is the host too, and
a "graph" replays the captured steps.  The method's own code runs unchanged: handle exchange,
the stream-flag counts of every send, receive and exchange (push and pull), the collectives'
READY/DATA handshakes, the host fallback, and the data validation that follows.
Usage: mpirun -np N python ipc_standin.py OP SIZES [flags-broken]
(GPUCOMM_IPC_SYNC and GPUCOMM_IPC_MODE as for the payload; STANDIN_ARGS: more options).  Exit status as cli.main's."""

import atexit
import ctypes
import mmap
import os
import shlex
import sys
import tempfile
import time
from types import SimpleNamespace

import numpy as np

from gpucomm.errors import CapabilityError
from gpucomm.payload import cli, engine
from gpucomm.payload.backend import NumpyBackend
from gpucomm.payload.methods import ipc_copy

_SHM = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
_files, _maps = [], {}


class DeviceArray(np.ndarray):
    """A numpy array whose .data.ptr is its address, as a cupy array's is its device pointer."""

    @property
    def data(self):
        return SimpleNamespace(ptr=self.__array_interface__["data"][0])

    def fill(self, value):
        np.ndarray.fill(self, value)


def _cleanup():
    for path in _files:
        try:
            os.unlink(path)
        except OSError:
            pass


atexit.register(_cleanup)


class FakeRuntime:
    cudaIpcMemLazyEnablePeerAccess = 1
    memcpyDefault = 4

    def __init__(self):
        self.base = {}  # address -> (file, length) of this rank's allocations

    def ipcGetMemHandle(self, ptr):
        return self.base[ptr][0].encode()

    def ipcOpenMemHandle(self, handle, flags):
        path = handle.decode()
        if path not in _maps:
            fd = os.open(path, os.O_RDWR)
            _maps[path] = mmap.mmap(fd, os.fstat(fd).st_size)
            os.close(fd)
        buf = _maps[path]
        return ctypes.addressof(ctypes.c_char.from_buffer(buf))

    def ipcCloseMemHandle(self, ptr):
        pass

    def memcpyAsync(self, dst, src, nbytes, kind, stream):
        ctypes.memmove(dst, src, nbytes)  # the "copy engine" is done when the call returns


class SharedMemoryDevice(NumpyBackend):
    name = "cupy"
    is_device = True
    is_hip = False

    def __init__(self, device=None):
        self.device = device
        self.runtime = FakeRuntime()
        self.stream = SimpleNamespace(ptr=0, synchronize=lambda: None)

    def empty(self, nbytes, dtype=np.uint8):
        fd, path = tempfile.mkstemp(prefix="gpucomm-ipc-standin-", dir=_SHM)
        _files.append(path)
        size = max(int(nbytes), 1)
        os.ftruncate(fd, size)
        buf = mmap.mmap(fd, size)
        os.close(fd)
        _maps[path] = buf
        arr = np.frombuffer(buf, dtype=np.uint8).view(DeviceArray)
        self.runtime.base[arr.data.ptr] = (path, size)
        return arr.view(dtype)[: nbytes // np.dtype(dtype).itemsize]

    def capture(self, steps):
        """A "graph" whose launch runs ``steps()`` again (capturing runs nothing, as on a GPU)."""
        return SimpleNamespace(launch=lambda stream: steps())

    def pci_bus_id(self):
        return f"standin:{self.device}"

    def describe(self):
        return {"backend": "standin", "device": self.device, "pci_bus_id": self.pci_bus_id(),
                "name": "shared memory standing in for a GPU"}


class PollingFlags:
    """Stream flags where the stream is the host: a store, and a wait that polls (the real
    stream would wait on the GPU; here the host does, which is the same order of events)."""

    def __init__(self, is_hip):
        if "flags-broken" in sys.argv:
            raise CapabilityError("stream memory operations unavailable: stand-in told to fail")

    def write(self, stream, addr, value):
        ctypes.c_uint32.from_address(addr).value = value & 0xFFFFFFFF

    def wait(self, stream, addr, value):
        cell = ctypes.c_uint32.from_address(addr)
        deadline = time.monotonic() + 30
        while ((cell.value - value) & 0xFFFFFFFF) >= 0x80000000:  # cyclic >=, as the driver's
            if time.monotonic() > deadline:
                raise RuntimeError(f"stand-in flag wait for {value} timed out at {cell.value}")
            time.sleep(0)


class HostSideStreams:
    """The side streams of the collectives where every stream is the host (in order already)."""

    def __init__(self, be, n):
        self.streams = [SimpleNamespace(ptr=0, synchronize=lambda: None) for _ in range(n)]

    def fork(self):
        pass

    def join(self):
        pass

    def synchronize(self):
        pass


if __name__ == "__main__":
    engine.make_backend = lambda name, device: SharedMemoryDevice(device)
    ipc_copy.StreamFlags = PollingFlags
    ipc_copy.SideStreams = HostSideStreams
    op, sizes = sys.argv[1], sys.argv[2]
    sys.exit(cli.main([op, "--method", "ipc-copy", "--backend", "cupy", "--sizes", sizes,
                       "--iters", "30", "--warmup", "3", "--max-bandwidth", "0", "--timer", "host"]
                      + shlex.split(os.environ.get("STANDIN_ARGS", ""))))
