"""``ipc-copy``: CUDA/HIP IPC handles exchanged over MPI, then peer device-to-device copies
(the paper's "Device-Device Copy").

* point-to-point: push sendbuf[:n] into the peer's receive buffer with one copy-engine memcpy,
  wait for it, tell the peer with a one-byte MPI message (GPUCOMM_IPC_MODE=pull: the sender
  only tells, the receiver copies from the sender's buffer);
* all-to-all: every rank pushes block d into rank d's receive buffer (one stream per peer so
  the copies run concurrently), waits, then an MPI barrier ends the iteration;
* all-reduce: the paper's naive scheme: rank 0 pulls every rank's buffer by peer copy, sums
  them with one GPU reduction, pushes the result into every rank's receive buffer.

Every rank must see the peers' GPUs (no per-rank CUDA_VISIBLE_DEVICES isolation) and the GPUs
must be able to access each other; the handles opened are those of the ranks the operation
exchanges with (its peers()), which must run on this rank's node.
"""

import os

import numpy as np

from ..errors import CapabilityError, GpucommError
from .base import Method


class IpcCopyMethod(Method):
    name = "ipc-copy"
    backends = ("cupy",)

    def setup(self, sendbuf, recvbuf):
        super().setup(sendbuf, recvbuf)
        rt = self.be.runtime
        error = None
        try:
            mine = (bytes(rt.ipcGetMemHandle(sendbuf.data.ptr)), bytes(rt.ipcGetMemHandle(recvbuf.data.ptr)))
        except Exception as exc:
            mine, error = None, f"ipcGetMemHandle failed: {exc}"
        handles = self.comm.allgather(mine)
        self.peer_send, self.peer_recv, self._opened = {}, {}, []
        peers = self.ctx.comm_peers  # only the ranks the operation exchanges with
        away = [p for p in peers if not self.ctx.same_host(p)]
        if error is None and away:
            error = (f"rank {away[0]} runs on another node: IPC copies move data between the "
                     "GPUs of one node only")
        # test hook (engine._test_request): GPUCOMM_TEST_IPC_REFUSED=RANK makes the driver's
        # refusal happen on that rank, through the same path as a real one
        hook = os.environ.get("GPUCOMM_TEST_IPC_REFUSED", "")
        if hook and not hook.isdigit():
            raise GpucommError(f"bad GPUCOMM_TEST_IPC_REFUSED={hook!r}: expected a rank")
        refused = hook == str(self.ctx.rank)
        if error is None:
            for peer in peers:
                try:
                    if refused:
                        raise RuntimeError("cudaErrorInvalidDevice: invalid device ordinal "
                                           "(GPUCOMM_TEST_IPC_REFUSED)")
                    for table, handle in zip((self.peer_send, self.peer_recv), handles[peer]):
                        table[peer] = rt.ipcOpenMemHandle(handle, rt.cudaIpcMemLazyEnablePeerAccess)
                        self._opened.append(table[peer])
                except Exception as exc:
                    error = (f"rank {self.ctx.rank}: CUDA/HIP IPC unavailable: cannot open the IPC "
                             f"handle of rank {peer} (GPU not visible to this rank, or no peer "
                             f"access): {exc}")
                    break
        errors = [e for e in self.comm.allgather(error) if e]
        if errors:
            self.close()
            msg = errors[0]
            raise CapabilityError(msg if msg.startswith("rank ") else f"CUDA/HIP IPC unavailable: {msg}")
        self.peer_send[self.ctx.rank] = sendbuf.data.ptr
        self.peer_recv[self.ctx.rank] = recvbuf.data.ptr
        self.streams = None
        self.stack = None
        self.pull = os.environ.get("GPUCOMM_IPC_MODE", "push").strip().lower() == "pull"

    def _copy(self, dst_ptr, src_ptr, nbytes, stream=None):
        rt = self.be.runtime
        rt.memcpyAsync(dst_ptr, src_ptr, nbytes, rt.memcpyDefault, (stream or self.be.stream).ptr)

    def send(self, nbytes, peer):
        if not self.pull:
            self._copy(self.peer_recv[peer], self.sendbuf.data.ptr, nbytes)
            self.be.stream.synchronize()
        self.notify(peer)

    def recv(self, nbytes, peer):
        self.wait_notify(peer)
        if self.pull:
            self._copy(self.recvbuf.data.ptr, self.peer_send[peer], nbytes)
            self.be.stream.synchronize()

    def exchange(self, nbytes, peer):
        """Both ranks push into each other's receive buffer at once, then tell each other
        (pull mode: tell first, then both copy from the other's send buffer)."""
        if self.pull:
            self.notify_each_other(peer)
            self._copy(self.recvbuf.data.ptr, self.peer_send[peer], nbytes)
            self.be.stream.synchronize()
        else:
            self._copy(self.peer_recv[peer], self.sendbuf.data.ptr, nbytes)
            self.be.stream.synchronize()
        self.notify_each_other(peer)

    def prepare(self, nbytes):
        self.be.synchronize()
        if self.ctx.op_name == "alltoall" and self.streams is None:
            cuda = self.be.xp.cuda
            self.streams = [cuda.Stream(non_blocking=True) for _ in range(self.ctx.nranks)]
        if self.ctx.op_name == "allreduce" and self.ctx.rank == 0 and self.stack is None:
            count = self.sendbuf.nbytes // 4
            self.stack = self.be.xp.empty((self.ctx.nranks, count), dtype=np.float32)

    def alltoall(self, block):
        me = self.ctx.rank
        src = self.sendbuf.data.ptr
        for d in range(self.ctx.nranks):
            self._copy(self.peer_recv[d] + me * block, src + d * block, block, self.streams[d])
        for s in self.streams:
            s.synchronize()
        self.comm.Barrier()

    def allreduce(self, count):
        nbytes = count * 4
        if self.ctx.rank == 0:
            stack = self.stack
            row = stack.strides[0]
            for r in range(self.ctx.nranks):
                self._copy(stack.data.ptr + r * row, self.peer_send[r], nbytes)
            out = self.recvbuf[:nbytes].view(np.float32)
            self.be.xp.sum(stack[:, :count], axis=0, out=out)
            for r in self.ctx.peers():
                self._copy(self.peer_recv[r], self.recvbuf.data.ptr, nbytes)
            self.be.stream.synchronize()
        self.comm.Barrier()

    def close(self):
        for ptr in getattr(self, "_opened", []):
            try:
                self.be.runtime.ipcCloseMemHandle(ptr)
            except Exception:
                pass
        self._opened = []
