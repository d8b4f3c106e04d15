"""Multi ping-pong between two nodes: the ranks split into node A and node B with P ranks each;
rank i of A ping-pongs with rank i of B, all P pairs at once (the paper's "mpp", Fig. 7).

The nodes are the engine's (the MPI shared-memory domains, or rank groups with --ranks-per-node);
the i-th rank of a node is its i-th lowest global rank, so any launcher distribution works.
Time = half the round trip, the maximum over all ranks; goodput = pair goodput x P, the
per-node aggregate (metrics.goodput_GBps with pairs=P).
"""

from ...constants import MULTI_PINGPONG
from ...errors import GpucommError, collective
from ...metrics import busbw_GBps, goodput_GBps
from .pingpong import PingPong


class MultiPingPong(PingPong):
    name = MULTI_PINGPONG

    @classmethod
    def check_ranks(cls, nranks):
        if nranks < 2 or nranks % 2:
            return (f"multi-pingpong needs an even number of ranks (P on each of two nodes), got {nranks} "
                    "(start it with srun -N 2 -n 2P, or on one machine mpirun -n 2P ... --ranks-per-node P)")
        return None

    def __init__(self, ctx, method):
        super().__init__(ctx, method)
        members = {}
        for rank, node in enumerate(ctx.node_of):
            members.setdefault(node, []).append(rank)
        sizes = [len(m) for _, m in sorted(members.items())]
        if len(sizes) != 2 or sizes[0] != sizes[1]:
            where = ", ".join(f"{n} ranks" for n in sizes)
            raise collective(GpucommError(
                f"multi-pingpong needs two nodes with the same number of ranks, got {len(sizes)} "
                f"node(s) ({where}); on one machine, --ranks-per-node K treats groups of K ranks "
                "as nodes"))
        a, b = (m for _, m in sorted(members.items()))
        self.pairs = len(a)
        self.parallel_links = self.pairs
        self.pair_ranks = [list(p) for p in zip(a, b)]
        partner_of = {**dict(zip(a, b)), **dict(zip(b, a))}
        self.peer = partner_of[ctx.rank]
        self.first = ctx.rank in a

    def meta(self):
        return {"pairs": self.pairs, "pair_ranks": self.pair_ranks}

    def metrics(self, size, time_s):
        n, p = self.ctx.nranks, self.pairs
        return {"goodput_GBps": goodput_GBps(self.name, size, time_s, n, pairs=p),
                "busbw_GBps": busbw_GBps(self.name, size, time_s, n, pairs=p)}
