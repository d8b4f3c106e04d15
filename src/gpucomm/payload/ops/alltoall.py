"""All-to-all: every rank sends a block of ``size`` bytes to every rank (itself included).

The sweep variable is the per-peer block, as in the paper.  Block s->d holds a pattern seeded
by (s, d, size); every received block is checked for its source rank and offset.
"""

from ...constants import ALLTOALL
from ...metrics import busbw_GBps, goodput_GBps
from ..backend import pattern_seed
from .base import Operation


class AllToAll(Operation):
    name = ALLTOALL

    def buffer_bytes(self, max_size):
        n = self.ctx.nranks
        return max_size * n, max_size * n

    def prepare(self, size):
        ctx, be = self.ctx, self.be
        for d in range(ctx.nranks):
            ctx.sendbuf[d * size:(d + 1) * size] = be.pattern(size, pattern_seed(ctx.rank, d, size))
        ctx.recvbuf[:size * ctx.nranks] = 0
        be.synchronize()

    def step(self, size):
        self.method.alltoall(size)

    def validate(self, size):
        ctx, be = self.ctx, self.be
        for s in range(ctx.nranks):
            got = ctx.recvbuf[s * size:(s + 1) * size]
            expected = be.pattern(size, pattern_seed(s, ctx.rank, size))
            bad = be.first_mismatch(got, expected)
            if bad >= 0:
                return (f"rank {ctx.rank}: all-to-all block from rank {s} is wrong at size {size} B "
                        f"(first bad byte at block offset {bad}: got {int(got[bad])}, "
                        f"expected {int(expected[bad])})")
        return None

    def corrupt(self, size):
        self.ctx.recvbuf[size * self.ctx.nranks - 1] = 0
        self.be.synchronize()

    def metrics(self, size, time_s):
        n = self.ctx.nranks
        return {"goodput_GBps": goodput_GBps(self.name, size, time_s, n),
                "busbw_GBps": busbw_GBps(self.name, size, time_s, n)}
