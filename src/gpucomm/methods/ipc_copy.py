"""``ipc-copy``: CUDA/HIP IPC handles exchanged over MPI, then peer device-to-device copies
(the paper's "Device-Device Copy").  A send pushes sendbuf[:n] into the peer's receive buffer
with one copy-engine memcpy, waits for it, and tells the peer with a one-byte MPI message.

Every rank must see the peer's GPU (no per-rank CUDA_VISIBLE_DEVICES isolation) and the two
GPUs must be able to access each other.
"""

from ..errors import CapabilityError
from .base import Method


class IpcCopyMethod(Method):
    name = "ipc-copy"
    backends = ("cupy",)

    def setup(self, sendbuf, recvbuf):
        super().setup(sendbuf, recvbuf)
        rt = self.be.runtime
        error = None
        try:
            handle = bytes(rt.ipcGetMemHandle(recvbuf.data.ptr))
        except Exception as exc:
            handle, error = None, f"ipcGetMemHandle failed: {exc}"
        handles = self.comm.allgather(handle)
        self.peer_recv = {}
        self._opened = []
        if error is None:
            for peer in self.ctx.peers():
                try:
                    ptr = rt.ipcOpenMemHandle(handles[peer], rt.cudaIpcMemLazyEnablePeerAccess)
                except Exception as exc:
                    error = (f"cannot open the IPC handle of rank {peer} (GPU not visible to this "
                             f"rank, or no peer access): {exc}")
                    break
                self.peer_recv[peer] = ptr
                self._opened.append(ptr)
        errors = [e for e in self.comm.allgather(error) if e]
        if errors:
            self.close()
            raise CapabilityError(f"CUDA/HIP IPC unavailable: {errors[0]}")

    def _push(self, dst_ptr, src_ptr, nbytes):
        rt = self.be.runtime
        rt.memcpyAsync(dst_ptr, src_ptr, nbytes, rt.memcpyDefault, self.be.stream.ptr)

    def send(self, nbytes, peer):
        self._push(self.peer_recv[peer], self.sendbuf.data.ptr, nbytes)
        self.be.stream.synchronize()
        self.notify(peer)

    def recv(self, nbytes, peer):
        self.wait_notify(peer)

    def close(self):
        for ptr in getattr(self, "_opened", []):
            try:
                self.be.runtime.ipcCloseMemHandle(ptr)
            except Exception:
                pass
        self._opened = []
