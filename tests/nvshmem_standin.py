"""The nvshmem method without a GPU: everything but the kernels.  The library (lib.NvshmemLib's
interface) is replaced by a host one: each rank's symmetric heap is a shared-memory file named
after the unique id rank 0 made and MPI broadcast (a broken broadcast finds no peer heap), every
rank maps every heap, a "kernel" does its blocks' puts in turn as memmoves into the peer's heap
at the same offset and adds 1 to the peer's 64-bit counter after each chunk, a wait polls the
local counter.  The method's own code runs unchanged: bootstrap arguments, the environment it
sets before init (multicast off, heap size), buffer layout, the signal counts of every
operation and path, validation by the engine.
Usage: mpirun -np N python nvshmem_standin.py OP SIZES [no-p2p] (GPUCOMM_NVSHMEM_* as for the
payload; STANDIN_ARGS: more options).  Exit status as cli.main's."""

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
from gpucomm.payload.methods import nvshmem as method_module

_SHM = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
_files = []
ALIGN = 512
UID_PREFIX = b"standin-uid:"


@atexit.register
def _cleanup():
    for path in _files:
        try:
            os.unlink(path)
        except OSError:
            pass


class HostDevice(NumpyBackend):
    name = "cupy"
    is_device = True
    is_hip = False

    def __init__(self, device=None):
        self.device = device
        self.stream = SimpleNamespace(ptr=0, synchronize=lambda: None)

    def pci_bus_id(self):
        return f"standin:{self.device}"

    def describe(self):
        return {"backend": "standin", "device": self.device, "pci_bus_id": self.pci_bus_id(),
                "name": "shared memory standing in for a GPU"}


def _u64(addr):
    return ctypes.c_uint64.from_address(addr)


class StandInLib:
    uid_size = 128
    path = "standin"

    def __init__(self, ctx):
        self.comm = ctx.comm
        self.calls = []

    def version(self):
        return "standin"

    def get_uid(self):
        return (UID_PREFIX + os.urandom(16).hex().encode()).ljust(self.uid_size, b"\0")

    def init(self, rank, nranks, uid, device):
        if not uid.startswith(UID_PREFIX) or len(uid) != self.uid_size:
            raise CapabilityError(f"NVSHMEM init: bad unique id {uid[:20]!r}")
        if os.environ.get("NVSHMEM_DISABLE_NVLS") != "1":
            raise CapabilityError("NVSHMEM init: NVSHMEM_DISABLE_NVLS is not 1 (stand-in refuses multicast)")
        self.size = int(os.environ["NVSHMEM_SYMMETRIC_SIZE"])
        self.rank, self.nranks = rank, nranks
        tag = uid[len(UID_PREFIX):].rstrip(b"\0").decode()
        def name(r):
            return os.path.join(_SHM, f"gpucomm-nvshmem-standin-{tag}-{r}")
        fd = os.open(name(rank), os.O_RDWR | os.O_CREAT, 0o600)
        _files.append(name(rank))
        os.ftruncate(fd, self.size)
        os.close(fd)
        self.comm.Barrier()  # the real bootstrap connects the PEs over the id's socket
        self.maps, self.bases = [], []
        for r in range(nranks):
            try:
                fd = os.open(name(r), os.O_RDWR)
            except OSError:
                raise CapabilityError(f"NVSHMEM init: PE {r}'s heap not found (unique id not shared?)") from None
            buf = mmap.mmap(fd, self.size)
            os.close(fd)
            self.maps.append(buf)
            self.bases.append(ctypes.addressof(ctypes.c_char.from_buffer(buf)))
        self.heap = np.frombuffer(self.maps[rank], dtype=np.uint8)
        self.base, self.top = self.bases[rank], 0

    def sm_count(self, device):
        return 8

    def malloc(self, nbytes):
        off = -(-self.top // ALIGN) * ALIGN
        if off + nbytes > self.size:
            raise CapabilityError(f"nvshmem_malloc({nbytes}) failed (symmetric heap too small?)")
        self.top = off + nbytes
        return self.base + off

    def free(self, ptr):
        self.calls.append(("free", ptr - self.base))

    def p2p(self, ptr, pe):
        return "no-p2p" not in sys.argv or pe == self.rank

    def finalize(self):
        self.comm.Barrier()

    def wrap(self, ptr, nbytes):
        off = ptr - self.base
        return self.heap[off:off + nbytes]

    def quiet(self):
        pass

    # the "device": one-sided stores into the peer's heap, polling waits on the own one
    def _remote(self, addr, pe):
        return self.bases[pe] + (addr - self.base)

    def _put(self, dst, src, nbytes, sig_out, pe, shape=None):
        blocks, chunk = (shape[0], shape[1]) if shape else (1, max(nbytes, 1))
        for b in range(blocks):
            off = b * chunk
            n = max(0, min(chunk, nbytes - off))
            if n:
                ctypes.memmove(self._remote(dst + off, pe), src + off, n)
            if sig_out is not None:
                _u64(self._remote(sig_out, pe)).value += 1

    def _wait(self, sig_in, want):
        cell, deadline = _u64(sig_in), time.monotonic() + 30
        while cell.value < want:
            if time.monotonic() > deadline:
                raise RuntimeError(f"stand-in signal wait for {want} timed out at {cell.value}")
            time.sleep(0)

    def pingpong(self, dst, src, nbytes, shape, sig_out, sig_in, peer, first, n, base, stream):
        self.calls.append(("pingpong", nbytes, shape[0], n))
        for i in range(n):
            want = base + (i + 1) * shape[0]
            if not first:
                self._wait(sig_in, want)
            self._put(dst, src, nbytes, sig_out, peer, shape)
            if first:
                self._wait(sig_in, want)

    def put(self, dst, src, nbytes, shape, sig_out, peer, stream):
        self._put(dst, src, nbytes, sig_out, peer, shape)

    def wait(self, sig_in, want, stream):
        self._wait(sig_in, want)

    def bw_send(self, dst, src, nbytes, shape, sig_out, ack_in, peer, window, ack_want, stream):
        for _ in range(window - 1):
            self._put(dst, src, nbytes, None, peer, shape)
        self._put(dst, src, nbytes, sig_out, peer, shape)
        self._wait(ack_in, ack_want)

    def bw_recv(self, sig_in, want, ack_out, peer, stream):
        self._wait(sig_in, want)
        _u64(self._remote(ack_out, peer)).value += 1

    def alltoall(self, recv, send, block, shape, bpp, sig, me, npes, want, stream):
        self.calls.append(("alltoall", block, shape[0], bpp))
        chunk = shape[1]
        for d in range(npes):
            for b in range(bpp):
                off = b * chunk
                n = max(0, min(chunk, block - off))
                if n:
                    ctypes.memmove(self._remote(recv + me * block + off, d), send + d * block + off, n)
                _u64(self._remote(sig + 8 * me, d)).value += 1
        for d in range(npes):
            self._wait(sig + 8 * d, want)

    def put_stream(self, dst, src, nbytes, sig_out, peer, stream):
        self.calls.append(("put_stream", nbytes))
        self._put(dst, src, nbytes, sig_out, peer)

    def put_nosignal_stream(self, dst, src, nbytes, peer, stream):
        self._put(dst, src, nbytes, None, peer)

    def signal_stream(self, sig_out, peer, stream):
        _u64(self._remote(sig_out, peer)).value += 1

    def wait_stream(self, sig_in, want, stream):
        self._wait(sig_in, want)

    def allreduce_f32(self, dst, src, count, stream):
        self.comm.Barrier()
        total = np.zeros(count, dtype=np.float32)
        for pe in range(self.nranks):
            off = src - self.base
            total += np.frombuffer(self.maps[pe], dtype=np.float32, count=count, offset=off)
        self.comm.Barrier()
        self.wrap(dst, count * 4).view(np.float32)[:] = total


def checked_close(close):
    """The method's close, after checking that every counter holds exactly what the method
    expected to arrive (a count too low would let a real wait return before the data)."""
    def run(self):
        if self.lib is not None and self.initialised:
            n = self.ctx.nranks
            counters = self.sig.view(np.uint64)
            for (slot, src), want in sorted(self.got.items()):
                have = int(counters[slot * n + src])
                if have != want:
                    raise RuntimeError(f"stand-in: slot {slot} of rank {src} holds {have}, the method expected {want}")
            for src in range(n):
                have = int(counters[method_module.SLOT_A2A * n + src])
                if have != self.a2a_count:
                    raise RuntimeError(f"stand-in: all-to-all slot of rank {src} holds {have}, "
                                       f"expected {self.a2a_count}")
            print(f"standin: rank {self.ctx.rank}: signal counts agree ({len(self.got)} slots, "
                  f"all-to-all {self.a2a_count}); launches {sorted(set(c[0] for c in self.lib.calls))}", flush=True)
        close(self)
    return run


if __name__ == "__main__":
    engine.make_backend = lambda name, device: HostDevice(device)
    if "real-library" not in sys.argv:
        method_module.load_library = StandInLib
    method_module.NvshmemMethod.close = checked_close(method_module.NvshmemMethod.close)
    op, sizes = sys.argv[1], sys.argv[2]
    json_path = os.environ.get("STANDIN_JSON")
    sys.exit(cli.main([op, "--method", "nvshmem", "--backend", "cupy", "--sizes", sizes,
                       "--iters", "30", "--warmup", "3", "--max-bandwidth", "0", "--timer", "host"]
                      + (["--json", json_path] if json_path else [])
                      + shlex.split(os.environ.get("STANDIN_ARGS", ""))))
