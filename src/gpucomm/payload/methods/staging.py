"""``staging``: device -> pinned host copy, MPI on host buffers, host -> device copy
(the paper's "Trivial Staging").

Its timed loop stays mpi4py's (the record's timed_loop_note says so): every message is a device
copy, a stream synchronisation, MPI and a copy back, the copies cupy calls from Python, so a
compiled loop could only take the MPI calls, one compiled call per message, which costs about
what mpi4py's calls cost (NOT_COMPILED)."""

from ...constants import STAGING
from ..topology import LINK_PCIE
from .base import Method
from .host import HostMpi

#: why staging's loop is not compiled: one compiled call per 8 B round trip costs about what
#: mpi4py's persistent requests cost (0.38 us against 0.41 us on a 2-core VM), where a compiled
#: loop per sample costs 0.18 us
NOT_COMPILED = ("staging: each message's device copies are cupy calls from Python; compiling "
                "only its MPI calls would save ~0.03 us of its ~21 us")


class StagingMethod(HostMpi, Method):
    name = STAGING
    backends = ("cupy", "numpy")
    #: every byte crosses the GPU's PCIe link to the host, twice
    nominal_link = LINK_PCIE

    def __init__(self, ctx):
        super().__init__(ctx)
        self.init_mpi(not_compiled=NOT_COMPILED)

    def setup(self, sendbuf, recvbuf):
        super().setup(sendbuf, recvbuf)
        self.host_send = self.be.host_empty(sendbuf.nbytes)
        self.host_recv = self.be.host_empty(recvbuf.nbytes)

    def prepare(self, nbytes):
        self.be.synchronize()
        self.bind(self.host_send, self.host_recv, nbytes)

    def _copy(self, dst, src, nbytes, kind):
        be = self.be
        if be.is_device:
            dptr = dst.ctypes.data if kind == "d2h" else dst.data.ptr
            sptr = src.data.ptr if kind == "d2h" else src.ctypes.data
            flag = be.runtime.memcpyDeviceToHost if kind == "d2h" else be.runtime.memcpyHostToDevice
            be.runtime.memcpyAsync(dptr, sptr, nbytes, flag, be.stream.ptr)
            be.stream.synchronize()
        else:
            dst[:nbytes] = src[:nbytes]

    def send(self, nbytes, peer):
        self._copy(self.host_send, self.sendbuf, nbytes, "d2h")
        self.mpi_send(nbytes, peer)

    def recv(self, nbytes, peer):
        self.mpi_recv(nbytes, peer)
        self._copy(self.recvbuf, self.host_recv, nbytes, "h2d")

    def exchange(self, nbytes, peer):
        self._copy(self.host_send, self.sendbuf, nbytes, "d2h")
        self.mpi_exchange(nbytes, peer)
        self._copy(self.recvbuf, self.host_recv, nbytes, "h2d")

    def allreduce(self, count):
        nbytes = count * 4
        self._copy(self.host_send, self.sendbuf, nbytes, "d2h")
        self.comm.Allreduce(self.mb.sf, self.mb.rf, op=self.ctx.MPI.SUM)
        self._copy(self.recvbuf, self.host_recv, nbytes, "h2d")

    def alltoall(self, block):
        total = block * self.ctx.nranks
        self._copy(self.host_send, self.sendbuf, total, "d2h")
        self.comm.Alltoall(self.mb.s, self.mb.r)
        self._copy(self.recvbuf, self.host_recv, total, "h2d")
