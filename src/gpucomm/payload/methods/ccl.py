"""``ccl``: NCCL (RCCL on a ROCm build of cupy) bootstrapped over MPI.

Point-to-point is ncclSend/ncclRecv, all-reduce ncclAllReduce, all-to-all grouped
ncclSend/ncclRecv to every rank, all on the rank's stream; the iteration ends with a stream
synchronisation (and is timed with device events by default, see timers.py).  By default the
engine captures each sample's iterations into a CUDA/HIP graph (--graph), so that the
interpreter's launch cost is out of the timed region; --graph off times the plain loop.
"""

from ...constants import CCL
from ...errors import CapabilityError
from ..capabilities import nccl_module
from .base import Method


class CclMethod(Method):
    name = CCL
    backends = ("cupy",)
    device_timer = True
    #: every iteration is device work on the rank's stream: the engine may capture a sample's
    #: iterations into one CUDA/HIP graph (--graph auto/on) and time its launch
    graph_capable = True
    #: the NCCL/RCCL communicator (setup makes it, close destroys it)
    nc = None

    def setup(self, sendbuf, recvbuf):
        super().setup(sendbuf, recvbuf)
        error = None
        try:
            self.nccl = nccl_module()
        except CapabilityError as exc:
            error = str(exc)
        errors = [e for e in self.comm.allgather(error) if e]
        if errors:
            raise CapabilityError(errors[0])
        nccl = self.nccl
        uid = nccl.get_unique_id() if self.ctx.rank == 0 else None
        uid = self.comm.bcast(uid, root=0)
        try:
            self.nc = nccl.NcclCommunicator(self.ctx.nranks, uid, self.ctx.rank)
        except Exception as exc:
            raise CapabilityError(f"NCCL/RCCL communicator init failed: {exc}") from None
        self.stream_ptr = self.be.stream.ptr
        self.sptr = sendbuf.data.ptr
        self.rptr = recvbuf.data.ptr

    def prepare(self, nbytes):
        self.be.synchronize()

    def send(self, nbytes, peer):
        self.nc.send(self.sptr, nbytes, self.nccl.NCCL_UINT8, peer, self.stream_ptr)

    def recv(self, nbytes, peer):
        self.nc.recv(self.rptr, nbytes, self.nccl.NCCL_UINT8, peer, self.stream_ptr)

    def exchange(self, nbytes, peer):
        nccl = self.nccl
        nccl.groupStart()
        self.send(nbytes, peer)
        self.recv(nbytes, peer)
        nccl.groupEnd()

    def allreduce(self, count):
        nccl = self.nccl
        self.nc.allReduce(self.sptr, self.rptr, count, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, self.stream_ptr)

    def alltoall(self, block):
        nccl, nc, s = self.nccl, self.nc, self.stream_ptr
        nccl.groupStart()
        for p in range(self.ctx.nranks):
            nc.send(self.sptr + p * block, block, nccl.NCCL_UINT8, p, s)
            nc.recv(self.rptr + p * block, block, nccl.NCCL_UINT8, p, s)
        nccl.groupEnd()

    def sync(self):
        self.be.stream.synchronize()

    def close(self):
        nc = self.nc
        if nc is not None:
            try:
                nc.destroy()
            except Exception:
                pass
            self.nc = None
