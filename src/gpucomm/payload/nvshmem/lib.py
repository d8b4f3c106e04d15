"""The ctypes binding of the built library (kernels.cu): one Python call per C function, every
pointer an int (device addresses, the rank's cudaStream_t), a non-zero return raised as
CapabilityError (set-up) or GpucommError (a launch) with the library's own reason.

tests/nvshmem_standin.py implements the same interface over host memory and MPI messages, so
that the method's bootstrap, buffer layout, signal accounting and validation run without a GPU.
"""

import ctypes

import numpy as np

from ...errors import CapabilityError, GpucommError

_P, _Z, _I, _U64 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_uint64

#: argument types of the library's functions (all return int, but gc_malloc and gc_error)
SIGNATURES = {
    "gc_uid_size": [],
    "gc_get_uid": [_P],
    "gc_init": [_I, _I, _P, _I],
    "gc_version": [],
    "gc_sm_count": [_I],
    "gc_free": [_P],
    "gc_p2p": [_P, _I],
    "gc_finalize": [],
    "gc_pingpong": [_P, _P, _Z, _Z, _I, _I, _P, _P, _I, _I, _I, _U64, _P],
    "gc_put": [_P, _P, _Z, _Z, _I, _I, _P, _I, _P],
    "gc_wait": [_P, _U64, _P],
    "gc_bw_send": [_P, _P, _Z, _Z, _I, _I, _P, _P, _I, _I, _U64, _P],
    "gc_bw_recv": [_P, _U64, _P, _I, _P],
    "gc_alltoall": [_P, _P, _Z, _Z, _I, _I, _I, _P, _I, _I, _U64, _P],
    "gc_put_stream": [_P, _P, _Z, _P, _I, _P],
    "gc_put_nosignal_stream": [_P, _P, _Z, _I, _P],
    "gc_signal_stream": [_P, _I, _P],
    "gc_wait_stream": [_P, _U64, _P],
    "gc_allreduce_f32": [_P, _P, _Z, _P],
}


class NvshmemLib:
    """The built library, loaded; ``backend`` wraps its symmetric memory as arrays."""

    def __init__(self, path, backend):
        try:
            self.dll = ctypes.CDLL(path)
        except OSError as exc:
            raise CapabilityError(f"cannot load the NVSHMEM kernels library {path}: {exc}") from None
        for name, args in SIGNATURES.items():
            fn = getattr(self.dll, name)
            fn.argtypes, fn.restype = args, ctypes.c_int
        self.dll.gc_malloc.argtypes, self.dll.gc_malloc.restype = [_Z], _P
        self.dll.gc_error.argtypes, self.dll.gc_error.restype = [], ctypes.c_char_p
        self.path, self.be = path, backend
        self.uid_size = self.dll.gc_uid_size()

    def _error(self):
        return (self.dll.gc_error() or b"").decode(errors="replace")

    def _setup(self, rc, what):
        if rc != 0:
            raise CapabilityError(f"{what}: {self._error()}")

    def _launch(self, rc):
        if rc != 0:
            raise GpucommError(f"NVSHMEM kernel: {self._error()}")

    # ------------------------------------------------------------------ set-up

    def version(self):
        v = self.dll.gc_version()
        return f"{v // 10000}.{v // 100 % 100}.{v % 100}"

    def get_uid(self):
        buf = ctypes.create_string_buffer(self.uid_size)
        self._setup(self.dll.gc_get_uid(buf), "NVSHMEM unique id")
        return buf.raw

    def init(self, rank, nranks, uid, device):
        buf = ctypes.create_string_buffer(bytes(uid), self.uid_size)
        self._setup(self.dll.gc_init(rank, nranks, buf, device), "NVSHMEM init")

    def sm_count(self, device):
        return self.dll.gc_sm_count(device)

    def malloc(self, nbytes):
        ptr = self.dll.gc_malloc(nbytes)
        if not ptr:
            raise CapabilityError(self._error())
        return ptr

    def free(self, ptr):
        self.dll.gc_free(ptr)

    def p2p(self, ptr, pe):
        return bool(self.dll.gc_p2p(ptr, pe))

    def finalize(self):
        self.dll.gc_finalize()

    def wrap(self, ptr, nbytes):
        """A flat uint8 array over ``nbytes`` of symmetric memory at ``ptr`` (not owned)."""
        cupy = self.be.xp
        mem = cupy.cuda.UnownedMemory(ptr, nbytes, self)
        return cupy.ndarray((nbytes,), dtype=np.uint8, memptr=cupy.cuda.MemoryPointer(mem, 0))

    def quiet(self):
        """Complete what the calls queued outside the stream (nothing: all is on the stream)."""

    # ------------------------------------------------------------------ kernels (the stream's)

    def pingpong(self, dst, src, nbytes, shape, sig_out, sig_in, peer, first, n, base, stream):
        blocks, chunk, threads = shape
        self._launch(self.dll.gc_pingpong(dst, src, nbytes, chunk, blocks, threads, sig_out, sig_in, peer,
                                          int(first), n, base, stream))

    def put(self, dst, src, nbytes, shape, sig_out, peer, stream):
        blocks, chunk, threads = shape
        self._launch(self.dll.gc_put(dst, src, nbytes, chunk, blocks, threads, sig_out, peer, stream))

    def wait(self, sig_in, want, stream):
        self._launch(self.dll.gc_wait(sig_in, want, stream))

    def bw_send(self, dst, src, nbytes, shape, sig_out, ack_in, peer, window, ack_want, stream):
        blocks, chunk, threads = shape
        self._launch(self.dll.gc_bw_send(dst, src, nbytes, chunk, blocks, threads, sig_out, ack_in, peer,
                                          window, ack_want, stream))

    def bw_recv(self, sig_in, want, ack_out, peer, stream):
        self._launch(self.dll.gc_bw_recv(sig_in, want, ack_out, peer, stream))

    def alltoall(self, recv, send, block, shape, bpp, sig, me, npes, want, stream):
        blocks, chunk, threads = shape
        self._launch(self.dll.gc_alltoall(recv, send, block, chunk, bpp, blocks, threads, sig, me, npes,
                                          want, stream))

    # ------------------------------------------------------------------ stream-ordered (host-initiated)

    def put_stream(self, dst, src, nbytes, sig_out, peer, stream):
        self._launch(self.dll.gc_put_stream(dst, src, nbytes, sig_out, peer, stream))

    def put_nosignal_stream(self, dst, src, nbytes, peer, stream):
        self._launch(self.dll.gc_put_nosignal_stream(dst, src, nbytes, peer, stream))

    def signal_stream(self, sig_out, peer, stream):
        self._launch(self.dll.gc_signal_stream(sig_out, peer, stream))

    def wait_stream(self, sig_in, want, stream):
        self._launch(self.dll.gc_wait_stream(sig_in, want, stream))

    def allreduce_f32(self, dst, src, count, stream):
        self._launch(self.dll.gc_allreduce_f32(dst, src, count, stream))
