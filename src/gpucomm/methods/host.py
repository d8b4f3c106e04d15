"""``host``: MPI on host (numpy) buffers: the paper's "MPI (host mem. buffers)"."""

from .base import TAG_DATA, Method


class MpiBuffers:
    """Pre-bound mpi4py message specs for one size (binding costs more than a small send)."""

    def __init__(self, MPI, send, recv, nbytes):
        self.s = [send, nbytes, MPI.BYTE]
        self.r = [recv, nbytes, MPI.BYTE]
        self.sf = [send, nbytes // 4, MPI.FLOAT]
        self.rf = [recv, nbytes // 4, MPI.FLOAT]


class HostMethod(Method):
    name = "host"
    backends = ("numpy",)

    def prepare(self, nbytes):
        self.mb = MpiBuffers(self.ctx.MPI, self.sendbuf, self.recvbuf, nbytes)

    def send(self, nbytes, peer):
        self.comm.Send(self.mb.s, dest=peer, tag=TAG_DATA)

    def recv(self, nbytes, peer):
        self.comm.Recv(self.mb.r, source=peer, tag=TAG_DATA)

    def allreduce(self, count):
        self.comm.Allreduce(self.mb.sf, self.mb.rf, op=self.ctx.MPI.SUM)

    def alltoall(self, block):
        self.comm.Alltoall(self.mb.s, self.mb.r)
