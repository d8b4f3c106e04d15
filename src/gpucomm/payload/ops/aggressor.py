"""The aggressor: sustained traffic for a given time, the background load of a noise study
(rfm.noise.NoiseBase runs it beside a victim measurement).

One engine sample is the whole run (``fixed_iters``): iterations of the ``--pattern`` back to
back until ``--duration`` seconds have passed or the ``--stop-file`` exists, whichever comes
first; every rank runs the same number of iterations (rank 0 decides when to stop and tells the
others with a non-blocking broadcast that travels during the next iteration and is polled with
short sleeps, so that waiting ranks leave the CPU to the victim).  Patterns:

* ``streams``: point-to-point streams; the nodes split into two halves, rank i of node k
  exchanges ``size`` bytes with rank i of node k + N/2 in both directions at once
  (method.exchange), all pairs at the same time;
* ``alltoall``: every rank sends ``size`` bytes to every other rank (method.alltoall).

``--target-bandwidth GBPS`` paces each rank's sends (sleeps between iterations), 0 = as fast
as possible.  ``--ready-file`` is written by rank 0 after the first timed iteration (the load
is on; the victim may start).  The data of the last iteration is validated.  The record
reports what was moved: ``bytes_moved`` (every rank's sends), ``iterations``, ``elapsed_s``,
``goodput_GBps`` = bytes_moved / elapsed (the aggregate load), ``busbw_GBps`` = one rank's
sends / elapsed (what the guard compares with a link), and ``ended`` (``duration`` or
``stop-file``).
"""

import os
import time

import numpy as np

from ...constants import AGGRESSOR
from ...errors import GpucommError, collective
from ...metrics import GB, aggressor_GBps
from ..backend import pattern_seed
from .alltoall import AllToAll
from .base import Operation

STREAMS, ALLTOALL = "streams", "alltoall"
PATTERNS = (STREAMS, ALLTOALL)
#: how the run ended (the record's ``ended``)
ENDED = {1: "duration", 2: "stop-file"}
#: a waiting rank polls the stop broadcast without pause for SPIN_S seconds (the usual case:
#: every rank ends an iteration at about the same time), then every POLL_S seconds
SPIN_S, POLL_S = 0.0002, 0.0005


class Aggressor(Operation):
    name = AGGRESSOR
    #: the operation takes --duration, --target-bandwidth, --pattern, --ready-file, --stop-file
    sustained = True
    #: one timed sample = the whole run
    fixed_iters = 1
    no_soak = ("its one timed sample is the whole run, so there is nothing between samples to "
               "check (its last iteration is validated)")

    def __init__(self, ctx, method):
        super().__init__(ctx, method)
        args = ctx.op_args
        self.duration = float(args.get("duration") or 10.0)
        self.target = float(args.get("target_bandwidth") or 0.0)
        self.pattern = args.get("pattern") or STREAMS
        self.ready_file = args.get("ready_file")
        self.stop_file = args.get("stop_file")
        self.iterations, self.ended, self.ready_written = 0, None, False
        if self.pattern == ALLTOALL:
            self.inner = AllToAll(ctx, method)
        elif self.pattern == STREAMS:
            self.peer = self.stream_peer(ctx.node_of, ctx.rank)
        else:
            raise collective(GpucommError(f"--pattern {self.pattern}: choose {', '.join(PATTERNS)}"))

    @staticmethod
    def stream_peer(node_of, rank):
        """The rank ``rank`` streams with: rank i of node k <-> rank i of node k + N/2; a
        collective GpucommError unless the nodes are an even number with equal rank counts."""
        members = {}
        for r, node in enumerate(node_of):
            members.setdefault(node, []).append(r)
        nodes = [members[n] for n in sorted(members)]
        counts = {len(m) for m in nodes}
        if len(nodes) < 2 or len(nodes) % 2 or len(counts) != 1:
            where = ", ".join(str(len(m)) for m in nodes)
            raise collective(GpucommError(
                f"aggressor --pattern streams needs an even number of nodes with the same number "
                f"of ranks, got {len(nodes)} node(s) ({where} ranks); on one machine, "
                "--ranks-per-node K treats groups of K ranks as nodes"))
        half = len(nodes) // 2
        for k, ranks in enumerate(nodes):
            if rank in ranks:
                other = nodes[(k + half) % len(nodes)]
                return other[ranks.index(rank)]
        raise AssertionError("rank not in any node")

    def meta(self):
        return {"pattern": self.pattern, "duration_s": self.duration,
                "target_GBps": self.target or None}

    def peers(self):
        return self.inner.peers() if self.pattern == ALLTOALL else [self.peer]

    def buffer_bytes(self, max_size):
        if self.pattern == ALLTOALL:
            return self.inner.buffer_bytes(max_size)
        return max_size, max_size

    def sent_per_iteration(self, size):
        """Bytes this rank sends in one iteration (to other ranks)."""
        return size * (self.ctx.nranks - 1) if self.pattern == ALLTOALL else size

    # -- buffers ---------------------------------------------------------------------------

    def prepare(self, size):
        if self.pattern == ALLTOALL:
            return self.inner.prepare(size)
        ctx, be = self.ctx, self.be
        ctx.sendbuf[:size] = be.pattern(size, pattern_seed(ctx.rank, size))
        ctx.recvbuf[:size] = 0
        self.expected = be.pattern(size, pattern_seed(self.peer, size))
        be.synchronize()

    def validate(self, size):
        if self.pattern == ALLTOALL:
            return self.inner.validate(size)
        got = self.ctx.recvbuf[:size]
        bad = self.be.first_mismatch(got, self.expected)
        if bad < 0:
            return None
        return (f"rank {self.ctx.rank}: aggressor stream from rank {self.peer} is wrong at size "
                f"{size} B (first bad byte at offset {bad}: got {int(got[bad])}, "
                f"expected {int(self.expected[bad])})")

    def corrupt(self, size):
        if self.pattern == ALLTOALL:
            return self.inner.corrupt(size)
        self.ctx.recvbuf[size // 2] = 0
        self.be.synchronize()

    # -- the run ---------------------------------------------------------------------------

    def step(self, size):
        if self.pattern == ALLTOALL:
            self.method.alltoall(size)
        else:
            self.method.exchange(size, self.peer)

    def loop(self, size, n):
        for _ in range(n):
            self.sustain(size)

    def decide(self, elapsed):
        """Rank 0: 0 = go on, else the ENDED code."""
        if self.stop_file and os.path.exists(self.stop_file):
            return 2
        return 1 if elapsed >= self.duration else 0

    def post(self, code):
        """Start broadcasting rank 0's ``code`` (every rank calls it, in the same iteration)."""
        flag = np.array([code], dtype=np.int8)
        return flag, self.ctx.comm.Ibcast(flag, root=0)

    @staticmethod
    def wait(posted):
        """Rank 0's code of a posted broadcast; a rank that waits longer than SPIN_S polls it
        with short sleeps (a blocking MPI call would spin on a CPU the victim may need)."""
        flag, req = posted
        spin_until = time.perf_counter() + SPIN_S
        while not req.Test():
            if time.perf_counter() > spin_until:
                time.sleep(POLL_S)
        return int(flag[0])

    def write_ready(self):
        tmp = f"{self.ready_file}.tmp"
        with open(tmp, "w") as fp:
            fp.write(f"{time.time():.3f}\n")
        os.replace(tmp, self.ready_file)

    def sustain(self, size):
        """Iterations back to back (paced to the target) until rank 0 says stop.  Rank 0's
        decision after iteration k travels during iteration k + 1 and is read after it (the
        link never idles for a broadcast's round trip, which a congested link makes long):
        a run ends one iteration after rank 0 saw its end."""
        per_iter = self.sent_per_iteration(size)
        rate = self.target * GB if self.target > 0 else None
        t0 = time.perf_counter()
        sent, posted = 0, None
        while True:
            self.step(size)
            self.method.sync()
            self.iterations += 1
            sent += per_iter
            if self.ready_file and not self.ready_written and self.ctx.rank == 0:
                self.write_ready()
                self.ready_written = True
            now = time.perf_counter()
            if rate:  # the pace of this rank's sends, never past the end of the run
                wait = min(t0 + sent / rate, t0 + self.duration) - now
                if wait > 0:
                    time.sleep(wait)
                    now = time.perf_counter()
            code = self.decide(now - t0) if self.ctx.rank == 0 else 0
            if posted is not None:
                ended = self.wait(posted)
                if ended:
                    self.ended = ENDED[ended]
                    return
            posted = self.post(code)

    def metrics(self, size, time_s):
        moved = self.iterations * self.sent_per_iteration(size) * self.ctx.nranks
        return {"goodput_GBps": aggressor_GBps(moved, time_s),
                "busbw_GBps": aggressor_GBps(moved / self.ctx.nranks, time_s),
                "bytes_moved": moved, "iterations": self.iterations, "elapsed_s": time_s,
                "ended": self.ended, "pattern": self.pattern, "target_GBps": self.target or None}
