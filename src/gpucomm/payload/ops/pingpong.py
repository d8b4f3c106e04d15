"""Ping-pong between two ranks: rank 0 sends, rank 1 answers; time = half the round trip."""

from ...constants import PINGPONG
from ...metrics import busbw_GBps, goodput_GBps
from ..backend import pattern_seed
from .base import Operation


class PingPong(Operation):
    name = PINGPONG
    time_scale = 0.5

    @classmethod
    def check_ranks(cls, nranks):
        if nranks != 2:
            return f"{cls.name} needs exactly 2 ranks, got {nranks} (start it with mpirun/srun -n 2)"
        return None

    def __init__(self, ctx, method):
        super().__init__(ctx, method)
        self.peer = 1 - ctx.rank
        self.first = ctx.rank == 0

    def peers(self):
        return [self.peer]

    def prepare(self, size):
        be, ctx = self.be, self.ctx
        send, recv = ctx.sendbuf, ctx.recvbuf
        send[:size] = be.pattern(size, pattern_seed(ctx.rank, size))
        recv[:size] = 0
        self.expected = be.pattern(size, pattern_seed(self.peer, size))
        be.synchronize()

    def step(self, size):
        m = self.method
        if self.first:
            m.send_then_recv(size, self.peer)
        else:
            m.recv_then_send(size, self.peer)

    def loop(self, size, n):
        m = self.method
        if self.first:
            m.ping_loop(size, self.peer, n)
        else:
            m.answer_loop(size, self.peer, n)

    def validate(self, size):
        got = self.ctx.recvbuf[:size]
        bad = self.be.first_mismatch(got, self.expected)
        if bad < 0:
            return None
        return (f"rank {self.ctx.rank}: data received from rank {self.peer} is wrong at size {size} B "
                f"(first bad byte at offset {bad}: got {int(got[bad])}, expected {int(self.expected[bad])})")

    def corrupt(self, size):
        recv = self.ctx.recvbuf
        recv[size // 2] = 0
        self.be.synchronize()

    def metrics(self, size, time_s):
        n = self.ctx.nranks
        return {"goodput_GBps": goodput_GBps(self.name, size, time_s, n),
                "busbw_GBps": busbw_GBps(self.name, size, time_s, n)}
