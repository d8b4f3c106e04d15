"""All-reduce (sum, float32) over all ranks.

Inputs are small rank-dependent integers, x_r[i] = (i mod 61) + (r mod 7) + 1, so every float32
partial sum is an exact integer (far below 2**24) in any order of reduction; the result must
equal n * ((i mod 61) + 1) + sum_r (r mod 7) exactly.
"""

import numpy as np

from ...constants import ALLREDUCE
from ...errors import GpucommError, collective
from ...metrics import busbw_GBps, goodput_GBps
from .base import Operation

F32 = 4


class AllReduce(Operation):
    name = ALLREDUCE

    @staticmethod
    def check_sizes(sizes):
        bad = [s for s in sizes if s % F32]
        if bad:
            raise collective(GpucommError(
                f"allreduce sizes must be multiples of 4 bytes (float32 elements): {bad[:5]}"))

    def _values(self, count, rank_term):
        xp = self.be.xp
        i = xp.arange(count, dtype=np.int32)
        return ((i % 61) + rank_term).astype(np.float32)

    def prepare(self, size):
        ctx, be = self.ctx, self.be
        count = size // F32
        ctx.sendbuf[:size].view(np.float32)[:] = self._values(count, ctx.rank % 7 + 1)
        ctx.recvbuf[:size] = 0xFF  # poison: NaN pattern for float32
        n = ctx.nranks
        self.rank_sum = sum(r % 7 for r in range(n))
        be.synchronize()

    def step(self, size):
        self.method.allreduce(size // F32)

    def validate(self, size):
        n, count = self.ctx.nranks, size // F32
        got = self.ctx.recvbuf[:size].view(np.float32)
        expected = self._values(count, 1) * n + self.rank_sum
        bad = self.be.first_mismatch(got, expected)
        if bad < 0:
            return None
        return (f"rank {self.ctx.rank}: all-reduce result wrong at size {size} B (first bad element "
                f"{bad}: got {float(got[bad])}, expected {float(expected[bad])})")

    def corrupt(self, size):
        self.ctx.recvbuf[:size].view(np.float32)[size // F32 // 2] = -1.0
        self.be.synchronize()

    def metrics(self, size, time_s):
        n = self.ctx.nranks
        return {"goodput_GBps": goodput_GBps(self.name, size, time_s, n),
                "busbw_GBps": busbw_GBps(self.name, size, time_s, n)}
