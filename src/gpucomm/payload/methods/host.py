"""``host``: MPI on host (numpy) buffers: the paper's "MPI (host mem. buffers)".

Point-to-point uses persistent requests (MPI_Send_init/MPI_Recv_init, once per size and peer;
each iteration is MPI_Start + MPI_Wait), so that no buffer is parsed or bound in the timed
loop; GPUCOMM_MPI_PERSISTENT=0 uses plain MPI_Send/MPI_Recv with pre-bound buffer specs.
A ping-pong sample's loop binds the four calls once (ping_loop/answer_loop); the bw operation's
window is ``window`` nonblocking messages into the same buffer, as osu_bw does.

Where numba-mpi is installed, the ping-pong's and the bw operation's timed loops are compiled
instead (payload.fastloop, --loop): one call per sample (per bw window), MPI_Send/MPI_Recv and
MPI_Isend/MPI_Irecv/MPI_Waitall as osu_latency and osu_bw make them; the record's timed_loop
says which loop ran and timed_loop_note why not the compiled one.
"""

import os

from ...constants import BW, COLLECTIVES, HOST, LOOP_MPI4PY, LOOP_NUMBA_MPI, MULTI_PINGPONG, PINGPONG
from ...errors import GpucommError, collective
from .. import fastloop
from .base import TAG_DATA, TAG_DONE, Method

#: the operations whose timed loop is the methods' ping_loop/answer_loop or send_window/
#: recv_window: the ones a compiled loop serves (the others call one mpi4py collective, or
#: run Python per iteration, e.g. the pair matrix's exchanges and delays)
COMPILED_OPS = (PINGPONG, MULTI_PINGPONG, BW)


def persistent_wanted():
    value = os.environ.get("GPUCOMM_MPI_PERSISTENT", "1").strip()
    if value not in ("0", "1"):
        raise collective(GpucommError(f"GPUCOMM_MPI_PERSISTENT={value!r}: expected 0 or 1"))
    return value == "1"


class MpiBuffers:
    """Pre-bound mpi4py message specs for one size (binding costs more than a small send)."""

    def __init__(self, MPI, send, recv, nbytes):
        self.s = [send, nbytes, MPI.BYTE]
        self.r = [recv, nbytes, MPI.BYTE]
        self.sf = [send, nbytes // 4, MPI.FLOAT]
        self.rf = [recv, nbytes // 4, MPI.FLOAT]


class PersistentP2P:
    """Persistent send/receive requests of one size, made on first use with a peer."""

    def __init__(self, comm, mb):
        self.comm, self.mb = comm, mb
        self.sends, self.recvs, self.pairs = {}, {}, {}
        self.windows = {}  # (peer, 'send'|'recv', window) -> [requests], all on one buffer

    def window(self, peer, kind, window):
        """``window`` persistent requests of one kind with ``peer`` (made on first use)."""
        key = (peer, kind, window)
        reqs = self.windows.get(key)
        if reqs is None:
            if kind == "send":
                reqs = [self.comm.Send_init(self.mb.s, dest=peer, tag=TAG_DATA) for _ in range(window)]
            else:
                reqs = [self.comm.Recv_init(self.mb.r, source=peer, tag=TAG_DATA) for _ in range(window)]
            self.windows[key] = reqs
        return reqs

    def add(self, peer, kind):
        if kind == "send":
            req = self.sends[peer] = self.comm.Send_init(self.mb.s, dest=peer, tag=TAG_DATA)
        else:
            req = self.recvs[peer] = self.comm.Recv_init(self.mb.r, source=peer, tag=TAG_DATA)
        return req

    def pair(self, peer):
        """Make (receive, send) with ``peer``; callers look in ``pairs`` first."""
        recv = self.recvs.get(peer) or self.add(peer, "recv")
        send = self.sends.get(peer) or self.add(peer, "send")
        pair = self.pairs[peer] = (recv, send)
        return pair

    def free(self):
        reqs = list(self.sends.values()) + list(self.recvs.values())
        for window in self.windows.values():
            reqs += window
        for req in reqs:
            req.Free()
        self.sends, self.recvs, self.pairs, self.windows = {}, {}, {}, {}


class HostMpi:
    """Point-to-point MPI on this size's host buffers, for the methods whose data crosses MPI
    in host memory (host; staging after its device copy): persistent requests made on first
    use with a peer (each message is MPI_Start + MPI_Wait), or plain calls on pre-bound specs."""

    def init_mpi(self, not_compiled=None):
        """Collective: persistent or plain requests, and the timed loop (fastloop.choose;
        ``not_compiled``: the method's reason why its loop cannot be compiled)."""
        self.persistent = persistent_wanted()
        self.request_style = "persistent" if self.persistent else "plain"
        self.p2p = None
        op = self.ctx.op_name
        if not_compiled is None and op not in COMPILED_OPS:
            what = "one mpi4py collective call" if op in COLLECTIVES else "Python (pair schedule, exchanges)"
            not_compiled = f"{op}: no compiled loop, each iteration is {what}"
        self.fast, self.timed_loop_note = fastloop.choose(self.ctx, self.ctx.loop, not_compiled)
        self.timed_loop = LOOP_MPI4PY if self.fast is None else LOOP_NUMBA_MPI
        if self.fast is not None:
            self.request_style = "plain"  # MPI_Send/MPI_Recv, MPI_Isend/MPI_Irecv: as OSU

    def bind(self, send, recv, nbytes):
        """Bind this size's host buffers (outside the timed loop)."""
        self.mb = MpiBuffers(self.ctx.MPI, send, recv, nbytes)
        self.close()
        self.p2p = PersistentP2P(self.comm, self.mb) if self.persistent else None
        f = self.fast
        if f is not None:  # the compiled loops' arguments but the peer, the count and n
            status = fastloop.address(f.status)
            self.fast_ping = (fastloop.address(send), fastloop.address(recv), nbytes, f.byte_h)
            self.fast_tail = (TAG_DATA, f.comm_h, status)
            self.fast_ack = (fastloop.address(f.token), TAG_DONE, status)

    def mpi_send(self, nbytes, peer):
        if self.p2p is not None:
            try:
                req = self.p2p.sends[peer]
            except KeyError:
                req = self.p2p.add(peer, "send")
            req.Start()
            req.Wait()
        else:
            self.comm.Send(self.mb.s, dest=peer, tag=TAG_DATA)

    def mpi_recv(self, nbytes, peer):
        if self.p2p is not None:
            try:
                req = self.p2p.recvs[peer]
            except KeyError:
                req = self.p2p.add(peer, "recv")
            req.Start()
            req.Wait()
        else:
            self.comm.Recv(self.mb.r, source=peer, tag=TAG_DATA)

    def mpi_send_then_recv(self, nbytes, peer):
        """A ping and its answer: the timed loop's one iteration (mpi_ping_loop)."""
        self.mpi_ping_loop(nbytes, peer, 1)

    def mpi_recv_then_send(self, nbytes, peer):
        """The answer to a ping: the timed loop's one iteration (mpi_answer_loop)."""
        self.mpi_answer_loop(nbytes, peer, 1)

    def mpi_ping_loop(self, nbytes, peer, n):
        """``n`` pings with the four calls bound once (persistent requests: MPI_Start and
        MPI_Wait on two pre-bound requests; MPI_Startall/MPI_Waitall cost more from Python,
        mpi4py converts the request list in every call); the answer's receive is started right
        after the ping leaves (off the critical path: the answer cannot come earlier).
        Compiled (self.fast): MPI_Send, MPI_Recv, as osu_latency."""
        if self.fast is not None:
            f = self.fast
            f.check(f.ping(*self.fast_ping, peer, *self.fast_tail, n), "ping")
            return
        if self.p2p is None:
            send, recv, s, r = self.comm.Send, self.comm.Recv, self.mb.s, self.mb.r
            for _ in range(n):
                send(s, peer, TAG_DATA)
                recv(r, peer, TAG_DATA)
            return
        recv, send = self.p2p.pairs.get(peer) or self.p2p.pair(peer)
        rs, rw, ss, sw = recv.Start, recv.Wait, send.Start, send.Wait
        for _ in range(n):
            ss()
            rs()
            sw()
            rw()

    def mpi_answer_loop(self, nbytes, peer, n):
        """``n`` answers; the next ping's receive is started once the answer has left, so that
        between a ping's arrival and its answer only the send is started.  Compiled:
        MPI_Recv, MPI_Send."""
        if self.fast is not None:
            f = self.fast
            f.check(f.answer(*self.fast_ping, peer, *self.fast_tail, n), "answer")
            return
        if self.p2p is None:
            send, recv, s, r = self.comm.Send, self.comm.Recv, self.mb.s, self.mb.r
            for _ in range(n):
                recv(r, peer, TAG_DATA)
                send(s, peer, TAG_DATA)
            return
        if n < 1:
            return
        recv, send = self.p2p.pairs.get(peer) or self.p2p.pair(peer)
        rs, rw, ss, sw = recv.Start, recv.Wait, send.Start, send.Wait
        rs()
        for _ in range(n - 1):
            rw()
            ss()
            rs()
            sw()
        rw()
        ss()
        sw()

    def _mpi_window(self, peer, kind, window):
        """``window`` nonblocking sends or receives of the same buffer, completed together
        (osu_bw's loop; the messages carry the same data)."""
        MPI = self.ctx.MPI
        if self.p2p is not None:
            reqs = self.p2p.window(peer, kind, window)
            MPI.Prequest.Startall(reqs)
        elif kind == "send":
            reqs = [self.comm.Isend(self.mb.s, dest=peer, tag=TAG_DATA) for _ in range(window)]
        else:
            reqs = [self.comm.Irecv(self.mb.r, source=peer, tag=TAG_DATA) for _ in range(window)]
        MPI.Request.Waitall(reqs)

    def _fast_window(self, kind, peer, window):
        """One window compiled: ``window`` x MPI_Isend (MPI_Irecv), MPI_Waitall and the
        acknowledgement, in one call."""
        f = self.fast
        reqs, statuses = f.window_arrays(window)
        send, recv, nbytes, byte = self.fast_ping
        fn, buf = (f.send_windows, send) if kind == "send" else (f.recv_windows, recv)
        tag, comm, _ = self.fast_tail
        f.check(fn(buf, nbytes, byte, peer, tag, comm, fastloop.address(reqs), f.request_bytes,
                   fastloop.address(statuses),
                   window, *self.fast_ack, 1), f"bw window ({kind})")

    def mpi_send_window(self, nbytes, peer, window):
        if self.fast is not None:
            return self._fast_window("send", peer, window)
        self._mpi_window(peer, "send", window)
        self.ack_recv(peer)

    def mpi_recv_window(self, nbytes, peer, window):
        if self.fast is not None:
            return self._fast_window("recv", peer, window)
        self._mpi_window(peer, "recv", window)
        self.ack_send(peer)

    def ack_send(self, peer):
        """The window's acknowledgement: a one-byte host message (Method.notify)."""
        self.notify(peer)

    def ack_recv(self, peer):
        self.wait_notify(peer)

    def mpi_exchange(self, nbytes, peer):
        """A simultaneous send to and receive from ``peer``: persistent requests started
        together (as for a ping), else MPI_Sendrecv."""
        if self.p2p is not None:
            self.mpi_send_then_recv(nbytes, peer)
        else:
            mb = self.mb
            self.comm.Sendrecv(mb.s, dest=peer, sendtag=TAG_DATA, recvbuf=mb.r, source=peer, recvtag=TAG_DATA)

    def close(self):
        if self.p2p is not None:
            self.p2p.free()
            self.p2p = None


class HostMethod(HostMpi, Method):
    name = HOST
    backends = ("numpy",)

    def __init__(self, ctx):
        super().__init__(ctx)
        self.check_capability()
        self.init_mpi(not_compiled=self.not_compiled())

    def not_compiled(self):
        """Why this method's loop stays mpi4py's under --loop auto (None: it may be compiled)."""
        return None

    def check_capability(self):
        """Raise CapabilityError if this machine cannot run the method (before init_mpi compiles
        anything)."""

    def prepare(self, nbytes):
        self.bind(self.sendbuf, self.recvbuf, nbytes)

    # the host buffers are the data: MPI moves them directly (one call less per message)
    send = HostMpi.mpi_send
    recv = HostMpi.mpi_recv
    send_then_recv = HostMpi.mpi_send_then_recv
    recv_then_send = HostMpi.mpi_recv_then_send
    ping_loop = HostMpi.mpi_ping_loop
    answer_loop = HostMpi.mpi_answer_loop
    send_window = HostMpi.mpi_send_window
    recv_window = HostMpi.mpi_recv_window
    exchange = HostMpi.mpi_exchange

    def allreduce(self, count):
        self.comm.Allreduce(self.mb.sf, self.mb.rf, op=self.ctx.MPI.SUM)

    def alltoall(self, block):
        self.comm.Alltoall(self.mb.s, self.mb.r)
