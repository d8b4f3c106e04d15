"""Pair matrix: every GPU pair of the node, so that one slow link cannot hide behind a test of
GPUs 0-1 (node health and acceptance).

Cases per size, in order (the engine's cases API, one record each):

* ``mode=uni scope=single pair=[i, j]``: ping-pong between the ordered pair i -> j (i sends
  first), time = half the round trip; every ordered pair, one at a time, the other ranks idle
  in the engine's barriers;
* ``mode=bidir scope=single pair=[i, j]``, i < j: i and j send to each other at the same time
  (method.exchange), time = one exchange; goodput = the pair's, both directions (2 S / t),
  ``direction_GBps`` = one direction's (S / t); unordered, since i-j and j-i are one exchange;
* ``scope=concurrent round=r pairs=[[a, b], ...]`` for both modes: all disjoint pairs at once,
  the round-robin rounds of pairs.tournament (n-1 rounds of n/2 pairs; odd n: one rank idles).

``--pairs rounds`` runs the concurrent rounds only: every pair once, in n-1 rounds instead of
n(n-1) + n(n-1)/2 single cases plus the rounds (a matrix of many nodes: 1023 rounds per size and
mode for 1024 nodes, against about 1.6 million single cases).  ``--between K`` with it runs only
the pairs between ranks [0, K) and [K, n) (pairs.between_rounds: two groups of a node pair matrix
in groups, pairs.group_jobs).

The time of a concurrent round is the engine's (each sample's maximum over all ranks: the
round ends when its slowest pair does); each pair's own time, the maximum over its two ranks,
is in the record's ``pair_results`` so that a slow pair is named, not the whole round.

Peer access between the GPUs of each pair (cudaDeviceCanAccessPeer; unknown where a rank
sees only its own GPU) is recorded as ``p2p`` per single-scope case and as a matrix in the
meta: a pair without it runs (staged by the driver or NCCL) and the check names the reason.
Each rank sends a pattern seeded by (source, destination, size) and checks what it received.
"""

import time

import numpy as np

from ...constants import PAIR_MATRIX, PAIR_UNI, PAIRS_ALL, PAIRS_ROUNDS
from ...errors import GpucommError
from ...metrics import busbw_GBps, goodput_GBps
from ...pairs import job_rounds, pair_label
from ...sizes import size_label
from ..backend import pattern_seed
from ..faults import SLOW_PAIR, slow_pair_request
from .base import Operation


class PairMatrix(Operation):
    name = PAIR_MATRIX
    has_cases = True
    paired = True

    def __init__(self, ctx, method):
        super().__init__(ctx, method)
        n = ctx.nranks
        self.singles = ctx.op_args.get("pairs", PAIRS_ALL) != PAIRS_ROUNDS
        self.between = int(ctx.op_args.get("between") or 0)
        if self.between and (self.singles or not 0 < self.between < n):
            raise GpucommError(f"--between {self.between}: needs --pairs {PAIRS_ROUNDS} and 0 < K < {n} ranks")
        self.rounds = job_rounds(n, self.between)
        self.p2p = self._peer_access()
        self.slow = slow_pair_request()
        self.peer = None
        self.rank_times = None

    def _peer_access(self):
        """{(i, j): True/False} where the GPUs' peer access is known (both ranks see both)."""
        be, ctx = self.be, self.ctx
        if not be.is_device:
            return {}
        buses = ctx.comm.allgather(be.pci_bus_id())
        row = {}
        for r, bus in enumerate(buses):
            if r == ctx.rank:
                continue
            try:
                dev = be.runtime.deviceGetByPCIBusId(bus)
                row[r] = bool(be.runtime.deviceCanAccessPeer(be.device, dev))
            except Exception:  # the peer's GPU is not visible to this rank: unknown
                pass
        return {(i, j): ok for i, rows in enumerate(ctx.comm.allgather(row)) for j, ok in rows.items()}

    def meta(self):
        meta = {"rounds": self.rounds, "pairs": PAIRS_ALL if self.singles else PAIRS_ROUNDS}
        if self.between:
            meta["between"] = self.between
        if self.p2p:
            meta["p2p"] = {f"{i}-{j}": ok for (i, j), ok in sorted(self.p2p.items())}
        if self.slow:
            meta["test_hook"] = f"{SLOW_PAIR}={':'.join(map(str, self.slow))}"
        return meta

    def cases(self, sizes):
        n = self.ctx.nranks
        for size in sizes:
            for mode in ("uni", "bidir"):
                for i in range(n if self.singles else 0):
                    for j in range(n):
                        if i != j and (mode == "uni" or i < j):
                            case = {"mode": mode, "scope": "single", "pair": [i, j]}
                            if (i, j) in self.p2p:
                                case["p2p"] = self.p2p[(i, j)]
                            yield size, case
                for r, pairs in enumerate(self.rounds):
                    yield size, {"mode": mode, "scope": "concurrent", "round": r, "pairs": pairs}

    def case_label(self, case):
        if case["scope"] == "single":
            arrow = "->" if case["mode"] == "uni" else "<>"
            return f"{case['mode']} {case['pair'][0]}{arrow}{case['pair'][1]}"
        return f"{case['mode']} round {case['round']}"

    def select(self, case):
        self.case = case
        self.mode = case["mode"]
        self.time_scale = 0.5 if self.mode == "uni" else 1.0
        pairs = [case["pair"]] if case["scope"] == "single" else case["pairs"]
        me = self.ctx.rank
        self.pair = next((p for p in pairs if me in p), None)
        self.peer = None if self.pair is None else self.pair[1 - self.pair.index(me)]
        self.first = self.pair is not None and self.pair[0] == me
        self.delay = 0.0
        if self.slow and self.first:
            i, j, delay = self.slow
            ordered = self.mode == "uni" and case["scope"] == "single"
            if self.pair == [i, j] or not ordered and sorted(self.pair) == sorted((i, j)):
                self.delay = delay

    def prepare(self, size):
        be, ctx = self.be, self.ctx
        if self.peer is None:
            return
        ctx.sendbuf[:size] = be.pattern(size, pattern_seed(ctx.rank, self.peer, size))
        ctx.recvbuf[:size] = 0
        self.expected = be.pattern(size, pattern_seed(self.peer, ctx.rank, size))
        be.synchronize()

    def step(self, size):
        if self.peer is None:
            return
        if self.delay:  # test hook: this pair's link is "degraded"
            time.sleep(self.delay)
        m = self.method
        if self.mode == "bidir":
            m.exchange(size, self.peer)
        elif self.first:
            m.send_then_recv(size, self.peer)
        else:
            m.recv_then_send(size, self.peer)

    def reduce_times(self, times):
        everyone = np.array(self.ctx.comm.allgather(times))
        self.rank_times = everyone * self.time_scale
        return everyone.max(axis=0)

    def validate(self, size):
        if self.peer is None:
            return None
        got = self.ctx.recvbuf[:size]
        bad = self.be.first_mismatch(got, self.expected)
        if bad < 0:
            return None
        return (f"rank {self.ctx.rank}: data received from rank {self.peer} is wrong at size {size} B "
                f"({self.case_label(self.case)}; first bad byte at offset {bad}: got {int(got[bad])}, "
                f"expected {int(self.expected[bad])})")

    def corrupt(self, size):
        if self.peer is not None:
            self.ctx.recvbuf[size // 2] = 0
            self.be.synchronize()

    def metrics(self, size, time_s):
        op = f"pair-{self.mode}"
        n = self.ctx.nranks
        out = {"goodput_GBps": goodput_GBps(op, size, time_s, n),
               "direction_GBps": goodput_GBps(PAIR_UNI, size, time_s, n),
               "busbw_GBps": busbw_GBps(op, size, time_s, n)}
        if self.case["scope"] == "concurrent":
            out["pair_results"] = []
            for pair in self.case["pairs"]:
                t = float(np.median(self.rank_times[pair].max(axis=0)))
                out["pair_results"].append({"pair": pair, "time_us": t * 1e6,
                                            "goodput_GBps": goodput_GBps(op, size, t, n)})
        return out

    def summary(self, records):
        """Rank 0's matrices: per size and mode, rows = sender, columns = receiver, the pairs
        one at a time: latency (us) at the smallest size, goodput (GB/s) at the others; then
        each concurrent round's per-pair goodput."""
        n = self.ctx.nranks
        sizes = sorted({r["size"] for r in records})
        lines = []
        for size in sizes:
            for mode in ("uni", "bidir"):
                single = [r for r in records if r["size"] == size and r["mode"] == mode
                          and r["scope"] == "single"]
                tables = []
                # latency at the smallest size, goodput at the others; none with --pairs rounds
                if single and size == sizes[0]:
                    tables.append(("latency us", lambda r: f"{r['time_us']['median']:.2f}"))
                if single and (size != sizes[0] or len(sizes) == 1):
                    tables.append(("goodput GB/s", lambda r: f"{r['goodput_GBps']:.2f}"))
                for what, fmt in tables:
                    cell = {}
                    for r in single:
                        i, j = r["pair"]
                        cell[i, j] = fmt(r) + ("*" if r.get("p2p") is False else "")
                        if mode == "bidir":
                            cell[j, i] = cell[i, j]
                    lines.append(f"pair matrix {mode} {size_label(size)} {what}, one pair at a time "
                                 "(row = sender, column = receiver" +
                                 (", * = no peer access)" if any(r.get("p2p") is False for r in single) else ")"))
                    lines.append(" " * 6 + "".join(f"{j:>10}" for j in range(n)))
                    for i in range(n):
                        lines.append(f"{i:>6}" + "".join(f"{cell.get((i, j), '-'):>10}" for j in range(n)))
                conc = [r for r in records if r["size"] == size and r["mode"] == mode
                        and r["scope"] == "concurrent"]
                for r in conc:
                    each = ", ".join(f"{pair_label(p['pair'])} {p['goodput_GBps']:.2f}" for p in r["pair_results"])
                    lines.append(f"pair matrix {mode} {size_label(size)} concurrent round {r['round']}: "
                                 f"{each} GB/s")
        return lines
