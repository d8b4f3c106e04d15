"""Stream-ordered flags between GPUs, with no host in the loop.

A rank's stream writes a 32-bit count into a peer's device memory once the work queued before
it is done (CUDA ``cuStreamWriteValue32``, ROCm ``hipStreamWriteValue32``; both fence the
preceding writes); the peer's stream waits until its copy of the count has reached a value
(``cuStreamWaitValue32`` / ``hipStreamWaitValue32``, cyclic greater-or-equal), and the work
queued after the wait starts only then.  The ipc-copy method uses this to tell a peer "your data
is there" without synchronising either host (GPUCOMM_IPC_SYNC, see methods/ipc_copy.py).
"""

import ctypes

from ..errors import CapabilityError

WAIT_GEQ = 0x0        # CU_STREAM_WAIT_VALUE_GEQ, hipStreamWaitValueGte
WRITE_DEFAULT = 0x0   # CU_STREAM_WRITE_VALUE_DEFAULT (a memory fence before the write)


class StreamFlags:
    """The driver's stream memory operations, loaded from the library cupy itself uses."""

    def __init__(self, is_hip):
        self.is_hip = is_hip
        try:
            if is_hip:
                lib = ctypes.CDLL("libamdhip64.so", mode=ctypes.RTLD_GLOBAL)
                write, wait = lib.hipStreamWriteValue32, lib.hipStreamWaitValue32
                write.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint]
                wait.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint,
                                 ctypes.c_uint32]
            else:
                lib = ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL)
                # CUDA >= 12 exports the stream memory operations that need no opt-in as _v2
                write = getattr(lib, "cuStreamWriteValue32_v2", None) or lib.cuStreamWriteValue32
                wait = getattr(lib, "cuStreamWaitValue32_v2", None) or lib.cuStreamWaitValue32
                write.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint]
                wait.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint]
        except (OSError, AttributeError) as exc:
            raise CapabilityError(f"stream memory operations unavailable: {exc}") from None
        write.restype = wait.restype = ctypes.c_int
        self._write, self._wait = write, wait

    def write(self, stream, addr, value):
        rc = self._write(stream, addr, value & 0xFFFFFFFF, WRITE_DEFAULT)
        if rc:
            raise CapabilityError(f"stream write of a flag failed (error {rc})")

    def wait(self, stream, addr, value):
        value &= 0xFFFFFFFF
        rc = (self._wait(stream, addr, value, WAIT_GEQ, 0xFFFFFFFF) if self.is_hip
              else self._wait(stream, addr, value, WAIT_GEQ))
        if rc:
            raise CapabilityError(f"stream wait on a flag failed (error {rc})")
