"""``host``: MPI Send/Recv on host (numpy) buffers: the paper's "MPI (host mem. buffers)"."""

from .base import TAG_DATA, Method


class HostMethod(Method):
    name = "host"
    backends = ("numpy",)

    def prepare(self, nbytes):
        byte = self.ctx.MPI.BYTE
        self._s = [self.sendbuf, nbytes, byte]
        self._r = [self.recvbuf, nbytes, byte]

    def send(self, nbytes, peer):
        self.comm.Send(self._s, dest=peer, tag=TAG_DATA)

    def recv(self, nbytes, peer):
        self.comm.Recv(self._r, source=peer, tag=TAG_DATA)
