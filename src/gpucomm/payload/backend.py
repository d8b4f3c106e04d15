"""Array backends: numpy (host memory) and cupy (CUDA or ROCm device memory).

Every buffer is a flat uint8 array.  Device buffers come straight from cudaMalloc/hipMalloc
(not from cupy's pool), so their base address is the allocation's and IPC handles map 1:1.
``Backend`` is what the engine, the methods and the operations may read of one (a Protocol:
NumpyBackend and CupyBackend, and the tests' stand-ins, give all of it).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Protocol

import numpy as np

from ..errors import CapabilityError

PATTERN_PERIOD = 251  # prime: a shifted pattern never equals the unshifted one


_SEED_MULTIPLIERS = (1, 37, 101, 151, 193)


def pattern_seed(*keys):
    """An offset into the pattern for (rank, [peer,] size): with the other keys fixed, any two
    ranks (or peers) below 251 get different offsets, so misrouted data never validates."""
    h = 0
    for mult, k in zip(_SEED_MULTIPLIERS, keys):
        k = int(k)
        h += mult * ((k + k.bit_length()) if k >= PATTERN_PERIOD else k)
    return h % PATTERN_PERIOD


def _base_pattern(seed):
    # values 1..251 (never 0, the poison value), a permutation rotated by seed
    return ((np.arange(PATTERN_PERIOD, dtype=np.int64) * 37 + seed) % PATTERN_PERIOD + 1).astype(np.uint8)


#: a cgroup memory limit at or above this is none (cgroup v1 writes "no limit" as about 2**63)
NO_CGROUP_LIMIT = 1 << 60
#: cgroup v2's and v1's files: (limit, usage)
_CGROUP_FILES = {"v2": ("memory.max", "memory.current"),
                 "v1": ("memory.limit_in_bytes", "memory.usage_in_bytes")}


def cgroup_room(proc_cgroup="/proc/self/cgroup", root="/sys/fs/cgroup"):
    """Bytes the process's memory cgroup still allows (its limit less its usage), or None
    where it has no limit or none can be read: v2's ``0::PATH`` line, else v1's memory line."""
    try:
        with open(proc_cgroup) as fp:
            lines = [line.strip().split(":", 2) for line in fp if line.count(":") >= 2]
    except OSError:
        return None
    places = [("v1", os.path.join(root, "memory", path.lstrip("/"))) for _, ctl, path in lines
              if "memory" in ctl.split(",")]
    places += [("v2", os.path.join(root, path.lstrip("/"))) for hid, ctl, path in lines
               if hid == "0" and ctl == ""]
    for kind, folder in places:
        limit_file, usage_file = _CGROUP_FILES[kind]
        try:
            with open(os.path.join(folder, limit_file)) as fp:
                limit = fp.read().strip()
            if limit == "max" or int(limit) >= NO_CGROUP_LIMIT:
                continue
            with open(os.path.join(folder, usage_file)) as fp:
                usage = int(fp.read().strip())
        except (OSError, ValueError):
            continue
        return max(0, int(limit) - usage)
    return None


class Backend(Protocol):
    """An array backend: where a rank's buffers live and how they are made, filled, compared
    and synchronised."""

    name: str                        # numpy or cupy (--backend)
    is_device: bool                  # buffers in device memory
    is_hip: bool                     # a ROCm GPU (cupy built for HIP)
    device: int | None               # the rank's GPU, None on the host
    stream: Any                      # the rank's one stream (cupy), None on the host
    xp: Any                          # the array module, numpy or cupy

    def empty(self, nbytes: int, dtype: Any = np.uint8) -> Any:
        """A flat array of ``nbytes`` bytes (device memory: a plain allocation, no pool)."""

    def free_bytes(self, sharers: int = 1) -> int | None:
        """The memory this rank may still allocate, or None where unknown."""

    def host_empty(self, nbytes: int) -> Any:
        """A host buffer (pinned for a device backend)."""

    def pattern(self, n: int, seed: int) -> Any:
        """``n`` bytes of the validation pattern of ``seed``."""

    def asarray(self, host_array: Any) -> Any:
        """``host_array`` in this backend's memory."""

    def to_host(self, arr: Any) -> np.ndarray:
        """``arr`` as a host numpy array."""

    def first_mismatch(self, got: Any, expected: Any) -> int:
        """The first index where ``got`` and ``expected`` differ, -1 where none."""

    def synchronize(self) -> None:
        """Wait for everything this rank queued."""

    def copy(self, dst: Any, src: Any, nbytes: int) -> None:
        """``nbytes`` of ``src`` into ``dst`` (on the rank's stream for a device backend)."""

    def capture(self, steps: Callable[[], None]) -> Any:
        """A graph of what ``steps()`` queues (device backends; CapabilityError on the host)."""

    def pci_bus_id(self) -> str | None:
        """The rank's GPU's PCI bus id, None on the host."""

    def describe(self) -> dict[str, Any]:
        """backend, device, pci_bus_id, name: the run's meta."""


class NumpyBackend:
    name = "numpy"
    is_device = False
    is_hip = False
    stream: Any = None
    xp: Any = np

    def __init__(self, device: int | None = None) -> None:
        self.device: int | None = None

    def empty(self, nbytes: int, dtype: Any = np.uint8) -> Any:
        return np.empty(nbytes // np.dtype(dtype).itemsize, dtype=dtype)

    def free_bytes(self, sharers: int = 1) -> int | None:
        """Host memory available to this rank: the node's free memory, or what the process's
        cgroup (a Slurm job's) still allows where that is less, over ``sharers`` ranks."""
        try:
            free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            free = None
        room = cgroup_room()
        if room is not None:
            free = room if free is None else min(free, room)
        return None if free is None else free // max(1, sharers)

    def host_empty(self, nbytes: int) -> Any:
        return np.empty(nbytes, dtype=np.uint8)

    def pattern(self, n: int, seed: int) -> Any:
        return np.resize(_base_pattern(seed), n)

    def asarray(self, host_array: Any) -> Any:
        return np.ascontiguousarray(host_array)

    def to_host(self, arr: Any) -> np.ndarray:
        return np.asarray(arr)

    def first_mismatch(self, got: Any, expected: Any) -> int:
        bad = np.flatnonzero(got != expected)
        return int(bad[0]) if bad.size else -1

    def synchronize(self) -> None:
        pass

    def copy(self, dst: Any, src: Any, nbytes: int) -> None:
        dst[:nbytes] = src[:nbytes]

    def capture(self, steps: Callable[[], None]) -> Any:
        raise CapabilityError("no graph capture on host memory (a device backend's)")

    def pci_bus_id(self) -> str | None:
        return None

    def describe(self) -> dict[str, Any]:
        return {"backend": "numpy", "device": "host"}


class CupyBackend:
    name = "cupy"
    is_device = True

    def __init__(self, device: int) -> None:
        try:
            import cupy
        except Exception as exc:  # ImportError, or a broken CUDA install
            raise CapabilityError(f"cupy is not usable here ({type(exc).__name__}: {exc}); "
                                  "GPU methods need cupy (pip install gpucomm[cuda13])") from None
        self.xp = cupy
        rt = cupy.cuda.runtime
        self.runtime = rt
        self.is_hip = bool(getattr(rt, "is_hip", False))
        try:
            count = rt.getDeviceCount()
        except Exception as exc:
            raise CapabilityError(f"no usable GPU: {exc}") from None
        if count < 1:
            raise CapabilityError("no GPU visible to this rank")
        self.device = device % count
        self.visible_devices = count
        cupy.cuda.Device(self.device).use()
        # one stream for everything this rank does: cupy kernels, copies and NCCL calls
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.stream.use()

    def free_bytes(self, sharers: int = 1) -> int | None:
        """Free memory of this rank's GPU."""
        try:
            return int(self.runtime.memGetInfo()[0])
        except Exception:
            return None

    def empty(self, nbytes: int, dtype: Any = np.uint8) -> Any:
        cupy = self.xp
        mem = cupy.cuda.Memory(max(nbytes, 1))  # a plain cudaMalloc, no pool
        ptr = cupy.cuda.MemoryPointer(mem, 0)
        return cupy.ndarray((nbytes // np.dtype(dtype).itemsize,), dtype=dtype, memptr=ptr)

    def host_empty(self, nbytes: int) -> Any:
        import cupyx
        return cupyx.empty_pinned((nbytes,), dtype=np.uint8)

    def pattern(self, n: int, seed: int) -> Any:
        base = self.xp.asarray(_base_pattern(seed))
        reps = -(-n // PATTERN_PERIOD)
        return self.xp.tile(base, reps)[:n]

    def asarray(self, host_array: Any) -> Any:
        return self.xp.asarray(host_array)

    def to_host(self, arr: Any) -> np.ndarray:
        return self.xp.asnumpy(arr)

    def first_mismatch(self, got: Any, expected: Any) -> int:
        bad = self.xp.flatnonzero(got != expected)
        return int(bad[0]) if bad.size else -1

    def synchronize(self) -> None:
        self.stream.synchronize()
        self.xp.cuda.Device(self.device).synchronize()

    def copy(self, dst: Any, src: Any, nbytes: int) -> None:
        self.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, self.runtime.memcpyDefault,
                                 self.stream.ptr)

    def capture(self, steps: Callable[[], None]) -> Any:
        """A graph of what ``steps()`` queues on the rank's stream (captured, not run)."""
        stream = self.stream
        stream.begin_capture()
        try:
            steps()
        except BaseException:
            try:
                stream.end_capture()
            except Exception:
                pass
            raise
        return stream.end_capture()

    def pci_bus_id(self) -> str | None:
        return self.xp.cuda.Device(self.device).pci_bus_id

    def describe(self) -> dict[str, Any]:
        props = self.runtime.getDeviceProperties(self.device)
        name = props["name"]
        name = name.decode() if isinstance(name, bytes) else str(name)
        return {"backend": "cupy-rocm" if self.is_hip else "cupy-cuda", "device": self.device,
                "pci_bus_id": self.pci_bus_id(), "name": name, **self.versions()}

    def versions(self) -> dict[str, Any]:
        """The driver's and the runtime's versions (CUDA's or HIP's numbers), where they answer."""
        out = {}
        for key, call in (("driver", "driverGetVersion"), ("runtime", "runtimeGetVersion")):
            try:
                out[key] = int(getattr(self.runtime, call)())
            except Exception:  # a stand-in runtime, or a driver that does not say
                continue
        return out


def make_backend(name: str, device: int) -> Backend:
    if name == "numpy":
        return NumpyBackend()
    if name == "cupy":
        return CupyBackend(device)
    raise ValueError(name)
