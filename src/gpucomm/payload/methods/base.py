"""What every method shares: the attributes and hooks the engine reads (with their defaults),
MPI tags, token messages, and the "not supported" default of every transfer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import CapabilityError
from ..topology import LINK_GPU

if TYPE_CHECKING:
    from ..context import Context

TAG_DATA = 101
TAG_DONE = 102
#: bytes of the acknowledgement that ends a window of the bw operation (osu_bw's 4)
ACK_BYTES = 4


class Method:
    """A way of moving bytes between ranks.  The engine makes one per run (``Method(ctx)``,
    collective: a capability check raises CapabilityError with the reason), then calls
    ``allocate``, ``setup``, ``meta``, per size ``min_warmup`` and ``prepare``, ``sync`` after every warm-up
    iteration and timed sample, and ``close`` at the end; the operation calls the transfers
    (``methods/__init__.py`` lists them; those a method lacks raise CapabilityError).  The
    attributes below are what the engine reads; a method sets them on its class, or on itself
    in its constructor or ``setup`` (they are read after ``setup``)."""

    #: the method's name (constants.METHODS)
    name: str = "?"
    #: backends the method can run on; the first is the default
    backends: tuple[str, ...] = ("cupy",)
    #: every iteration is device work on the rank's stream: device events may time it
    #: (--timer auto picks them, --timer device requires this; timers.py)
    device_timer = False
    #: every iteration is device work on the rank's stream that a CUDA/HIP graph can capture:
    #: the engine may time each sample as one graph launch (--graph auto/on)
    graph_capable = False
    #: the link whose nominal bandwidth bounds the method's (the guard's limit; topology.LINK_*)
    nominal_link = LINK_GPU
    #: the MPI requests of the point-to-point calls ('persistent', 'plain'); None: not MPI
    #: (meta's ``mpi_requests``)
    request_style: str | None = None
    #: the timed loop that runs (constants.LOOPS) and why not the compiled one
    #: (contract.TIMED_LOOP, TIMED_LOOP_NOTE: in the meta and every record); None: no MPI loop
    timed_loop: str | None = None
    timed_loop_note: str | None = None
    #: how a receiver learns its data has arrived, where the method chooses (meta's and every
    #: record's ``peer_sync``); None: nothing to say
    peer_sync: str | None = None
    #: how far the MPI takes device buffers, and why (meta's ``gpu_aware_mpi``); None: not asked
    gpu_aware_mpi: Any = None

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.comm = ctx.comm
        self.be = ctx.backend
        self._token = np.zeros(1, dtype=np.uint8)

    def allocate(self, send_bytes: int, recv_bytes: int) -> tuple[Any, Any] | None:
        """Collective: the method's own (send, receive) buffers (nvshmem: symmetric memory), or
        None: the engine allocates them from the backend."""
        return None

    def setup(self, sendbuf: Any, recvbuf: Any) -> None:
        """Collective, once: bind the buffers, exchange handles, make communicators."""
        self.sendbuf, self.recvbuf = sendbuf, recvbuf

    def min_warmup(self, nbytes: int) -> int:
        """The fewest untimed iterations a size of this method needs to reach its steady state
        (0: the engine's count, --warmup's or its default, stands); raises any count but
        --warmup 0."""
        return 0

    def prepare(self, nbytes: int) -> None:
        """Once per size, outside the timed region."""

    def sync(self) -> None:
        """Complete what the method has queued (the end of a warm-up iteration, of a sample)."""

    def meta(self) -> dict[str, Any]:
        """The method's own fields of the run's meta ({}: none)."""
        return {}

    def close(self) -> None:
        """Release what setup made (every rank reaches it)."""

    def send(self, nbytes: int, peer: int) -> None:
        raise CapabilityError(f"method {self.name} has no point-to-point transfer")

    def recv(self, nbytes: int, peer: int) -> None:
        raise CapabilityError(f"method {self.name} has no point-to-point transfer")

    def send_then_recv(self, nbytes: int, peer: int) -> None:
        """The ping of a ping-pong: send to ``peer``, then receive its answer.  Methods may
        order their calls differently (MPI: the answer's receive is posted before the ping)."""
        self.send(nbytes, peer)
        self.recv(nbytes, peer)

    def recv_then_send(self, nbytes: int, peer: int) -> None:
        """The answer of a ping-pong: receive from ``peer``, then send back."""
        self.recv(nbytes, peer)
        self.send(nbytes, peer)

    def ping_loop(self, nbytes: int, peer: int, n: int) -> None:
        """``n`` pings of a ping-pong, back to back (the timed loop of one sample); methods may
        bind their calls once for the whole loop."""
        for _ in range(n):
            self.send_then_recv(nbytes, peer)

    def answer_loop(self, nbytes: int, peer: int, n: int) -> None:
        """``n`` answers of a ping-pong, back to back."""
        for _ in range(n):
            self.recv_then_send(nbytes, peer)

    def send_window(self, nbytes: int, peer: int, window: int) -> None:
        """One iteration of the bw operation's sender (as osu_bw): ``window`` messages of
        sendbuf[:n] to ``peer`` back to back, then wait for its acknowledgement.  Methods may
        keep several messages in flight (MPI: nonblocking sends into the same buffer, as
        osu_bw does); the default sends them one after the other."""
        for _ in range(window):
            self.send(nbytes, peer)
        self.ack_recv(peer)

    def recv_window(self, nbytes: int, peer: int, window: int) -> None:
        """The bw operation's receiver: ``window`` messages into recvbuf[:n], then acknowledge."""
        for _ in range(window):
            self.recv(nbytes, peer)
        self.ack_send(peer)

    def ack_send(self, peer: int) -> None:
        """The acknowledgement that ends a window: ACK_BYTES through the method itself (into
        the peer's receive buffer, which the bw sender does not validate)."""
        self.send(ACK_BYTES, peer)

    def ack_recv(self, peer: int) -> None:
        self.recv(ACK_BYTES, peer)

    def exchange(self, nbytes: int, peer: int) -> None:
        """sendbuf[:n] to ``peer`` and recvbuf[:n] from it at the same time (bidirectional)."""
        raise CapabilityError(f"method {self.name} has no simultaneous exchange")

    def allreduce(self, count: int) -> None:
        raise CapabilityError(f"method {self.name} has no all-reduce")

    def alltoall(self, block: int) -> None:
        raise CapabilityError(f"method {self.name} has no all-to-all")

    # small host messages used as "data is there" notifications
    def notify(self, peer: int) -> None:
        self.comm.Send([self._token, 1, self.ctx.MPI.BYTE], dest=peer, tag=TAG_DONE)

    def wait_notify(self, peer: int) -> None:
        self.comm.Recv([self._token, 1, self.ctx.MPI.BYTE], source=peer, tag=TAG_DONE)

    def notify_each_other(self, peer: int) -> None:
        """Both ranks of a pair tell each other at once (neither waits for the other first)."""
        spec = [self._token, 1, self.ctx.MPI.BYTE]
        self.comm.Sendrecv(spec, dest=peer, sendtag=TAG_DONE, recvbuf=spec, source=peer, recvtag=TAG_DONE)
