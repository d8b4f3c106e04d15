"""What every method shares: MPI tags, token messages, and the "not supported" default."""

import numpy as np

from ...errors import CapabilityError

TAG_DATA = 101
TAG_DONE = 102
#: bytes of the acknowledgement that ends a window of the bw operation (osu_bw's 4)
ACK_BYTES = 4


class Method:
    name = "?"
    #: backends the method can run on; the first is the default
    backends = ("cupy",)

    def __init__(self, ctx):
        self.ctx = ctx
        self.comm = ctx.comm
        self.be = ctx.backend
        self._token = np.zeros(1, dtype=np.uint8)

    def setup(self, sendbuf, recvbuf):
        self.sendbuf, self.recvbuf = sendbuf, recvbuf

    def prepare(self, nbytes):
        pass

    def sync(self):
        pass

    def close(self):
        pass

    def send(self, nbytes, peer):
        raise CapabilityError(f"method {self.name} has no point-to-point transfer")

    def recv(self, nbytes, peer):
        raise CapabilityError(f"method {self.name} has no point-to-point transfer")

    def send_then_recv(self, nbytes, peer):
        """The ping of a ping-pong: send to ``peer``, then receive its answer.  Methods may
        order their calls differently (MPI: the answer's receive is posted before the ping)."""
        self.send(nbytes, peer)
        self.recv(nbytes, peer)

    def recv_then_send(self, nbytes, peer):
        """The answer of a ping-pong: receive from ``peer``, then send back."""
        self.recv(nbytes, peer)
        self.send(nbytes, peer)

    def ping_loop(self, nbytes, peer, n):
        """``n`` pings of a ping-pong, back to back (the timed loop of one sample); methods may
        bind their calls once for the whole loop."""
        for _ in range(n):
            self.send_then_recv(nbytes, peer)

    def answer_loop(self, nbytes, peer, n):
        """``n`` answers of a ping-pong, back to back."""
        for _ in range(n):
            self.recv_then_send(nbytes, peer)

    def send_window(self, nbytes, peer, window):
        """One iteration of the bw operation's sender (as osu_bw): ``window`` messages of
        sendbuf[:n] to ``peer`` back to back, then wait for its acknowledgement.  Methods may
        keep several messages in flight (MPI: nonblocking sends into the same buffer, as
        osu_bw does); the default sends them one after the other."""
        for _ in range(window):
            self.send(nbytes, peer)
        self.ack_recv(peer)

    def recv_window(self, nbytes, peer, window):
        """The bw operation's receiver: ``window`` messages into recvbuf[:n], then acknowledge."""
        for _ in range(window):
            self.recv(nbytes, peer)
        self.ack_send(peer)

    def ack_send(self, peer):
        """The acknowledgement that ends a window: ACK_BYTES through the method itself (into
        the peer's receive buffer, which the bw sender does not validate)."""
        self.send(ACK_BYTES, peer)

    def ack_recv(self, peer):
        self.recv(ACK_BYTES, peer)

    def exchange(self, nbytes, peer):
        """sendbuf[:n] to ``peer`` and recvbuf[:n] from it at the same time (bidirectional)."""
        raise CapabilityError(f"method {self.name} has no simultaneous exchange")

    def allreduce(self, count):
        raise CapabilityError(f"method {self.name} has no all-reduce")

    def alltoall(self, block):
        raise CapabilityError(f"method {self.name} has no all-to-all")

    # small host messages used as "data is there" notifications
    def notify(self, peer):
        self.comm.Send([self._token, 1, self.ctx.MPI.BYTE], dest=peer, tag=TAG_DONE)

    def wait_notify(self, peer):
        self.comm.Recv([self._token, 1, self.ctx.MPI.BYTE], source=peer, tag=TAG_DONE)

    def notify_each_other(self, peer):
        """Both ranks of a pair tell each other at once (neither waits for the other first)."""
        spec = [self._token, 1, self.ctx.MPI.BYTE]
        self.comm.Sendrecv(spec, dest=peer, sendtag=TAG_DONE, recvbuf=spec, source=peer, recvtag=TAG_DONE)
