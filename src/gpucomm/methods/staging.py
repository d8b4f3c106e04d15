"""``staging``: device -> pinned host copy, MPI on host buffers, host -> device copy
(the paper's "Trivial Staging")."""

from .base import TAG_DATA, Method


class StagingMethod(Method):
    name = "staging"
    backends = ("cupy", "numpy")

    def setup(self, sendbuf, recvbuf):
        super().setup(sendbuf, recvbuf)
        self.host_send = self.be.host_empty(sendbuf.nbytes)
        self.host_recv = self.be.host_empty(recvbuf.nbytes)

    def prepare(self, nbytes):
        self.be.synchronize()
        byte = self.ctx.MPI.BYTE
        self._s = [self.host_send, nbytes, byte]
        self._r = [self.host_recv, nbytes, byte]

    def _d2h(self, host, dev, nbytes):
        be = self.be
        if be.is_device:
            be.runtime.memcpyAsync(host.ctypes.data, dev.data.ptr, nbytes,
                                   be.runtime.memcpyDeviceToHost, be.stream.ptr)
            be.stream.synchronize()
        else:
            host[:nbytes] = dev[:nbytes]

    def _h2d(self, dev, host, nbytes):
        be = self.be
        if be.is_device:
            be.runtime.memcpyAsync(dev.data.ptr, host.ctypes.data, nbytes,
                                   be.runtime.memcpyHostToDevice, be.stream.ptr)
            be.stream.synchronize()
        else:
            dev[:nbytes] = host[:nbytes]

    def send(self, nbytes, peer):
        self._d2h(self.host_send, self.sendbuf, nbytes)
        self.comm.Send(self._s, dest=peer, tag=TAG_DATA)

    def recv(self, nbytes, peer):
        self.comm.Recv(self._r, source=peer, tag=TAG_DATA)
        self._h2d(self.recvbuf, self.host_recv, nbytes)
