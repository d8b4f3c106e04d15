"""Pairs of ranks: the round-robin schedule of disjoint pairs, the rounds between two groups and
the jobs of a node pair matrix in groups, the pair classes of a partition (which GPU pairs of a
node share one link type, hence one reference), how far two nodes are apart on the network (the
class of a pair of nodes), and the timing model of a pair matrix's rounds (its jobs' time limits)."""

import math

from .constants import PLACEMENTS
from .sizes import default_batch, default_iters


def tournament(n):
    """Rounds of disjoint unordered pairs covering every pair of ``n`` ranks once (circle
    method): n-1 rounds of n/2 pairs for even n; odd n: n rounds, one rank idle in each."""
    m = n + n % 2  # odd n: a dummy rank m-1; its partner idles that round
    order = list(range(m))
    rounds = []
    for _ in range(m - 1):
        pairs = [sorted((order[k], order[m - 1 - k])) for k in range(m // 2)]
        rounds.append(sorted(p for p in pairs if p[1] < n))
        order = [order[0], order[-1]] + order[1:-1]
    return rounds


def between_rounds(k, n):
    """Rounds of disjoint pairs covering every pair of one rank of [0, k) and one of [k, n) once,
    and no other pair: max(k, n - k) rounds, each pairing every rank of the smaller side with a
    distinct rank of the larger (a shift per round)."""
    a, b = list(range(k)), list(range(k, n))
    small, big = (a, b) if len(a) <= len(b) else (b, a)
    return [sorted(sorted((s, big[(i + r) % len(big)])) for i, s in enumerate(small)) for r in range(len(big))]


def groups_of(n, group):
    """``n`` nodes (their indices) cut into ceil(n / group) contiguous groups of as even sizes as
    possible, none larger than ``group``."""
    count = -(-n // group)
    size, extra = divmod(n, count)
    out, start = [], 0
    for g in range(count):
        end = start + size + (g < extra)
        out.append(list(range(start, end)))
        start = end
    return out


def group_jobs(n, group):
    """The jobs of a pair matrix of ``n`` nodes in groups of at most ``group`` (groups_of): one
    job per group (its own pairs, tournament rounds), then one per pair of groups (the pairs
    between them, between_rounds), every pair of nodes in exactly one job.  Each job is (stage,
    node indices, split): its nodes the first group's then the second's, split the first group's
    size (0: one group alone); the jobs of a stage share no node (stage 0: every group alone;
    then the tournament rounds of the groups)."""
    groups = groups_of(n, group)
    jobs = [(0, g, 0) for g in groups]
    for stage, rnd in enumerate(tournament(len(groups)), start=1):
        jobs += [(stage, groups[x] + groups[y], len(groups[x])) for x, y in rnd]
    return jobs


def job_rounds(n, split=0):
    """The rounds of a pair matrix job of ``n`` ranks: every pair (tournament), or with ``split``
    the pairs between ranks [0, split) and [split, n) only (between_rounds)."""
    return between_rounds(split, n) if split else tournament(n)


def pair_label(pair):
    return f"{pair[0]}-{pair[1]}"


def pair_class(classes, i, j):
    """The class of the unordered pair i-j in a partition's ``extras['pair_classes']``:
    {class: ["0-1", ...], ..., "default": class}; no map: one class, "all" (NVSwitch and
    fully linked nodes: every pair has the same links)."""
    if not classes:
        return "all"
    label = pair_label(sorted((i, j)))
    for name, members in classes.items():
        if name != "default" and label in members:
            return name
    return classes.get("default", "all")


def switch_distance(addr_a, addr_b):
    """How far apart two nodes are, from their SLURM_TOPOLOGY_ADDR paths: 'same-node',
    'same-switch' (the paths differ in the node only), 'different-switch' (in the leaf switch,
    the level above is shared), 'different-group' (above that: on Leonardo's and the usual
    dragonfly trees, the group switch).  This is the switch distance the paper's authors read from
    the same variable on Leonardo (HicrestLaboratory/Blink-GPU utils/find_nodes_distance.sh:
    distance = path length - first differing level)."""
    a, b = addr_a.split("."), addr_b.split(".")
    if a == b:
        return "same-node"
    common = 0
    for x, y in zip(a, b):
        if x != y:
            break
        common += 1
    levels = max(len(a), len(b)) - common  # 1: node only, 2: leaf switch, 3+: above
    return PLACEMENTS[min(levels, 3) - 1]


# -- the timing model of the rounds ---------------------------------------------------------------

#: a round's own seconds besides its iterations (buffers, barriers, validation, its record):
#: fitted on the GPU cluster's committed rounds (bench/results/2026-12-05-cpu-2core/53-pair-matrix)
ROUND_FIXED_S = 0.05
#: per timed sample: its barrier, synchronisation and timer
SAMPLE_S = 50e-6
#: the soak's check of the received data, per checked sample (a copy and compare of the message)
SOAK_GBPS = 5.0
#: a job's start before its first round: the launch, the interpreter's imports, MPI's and the
#: method's set-up (a cluster of 4 nodes: 5 s; many nodes read the same files: grows with them)
JOB_START_S, JOB_START_PER_NODE_S = 30.0, 0.1
#: the time limit is this many times the model's job ...
TIME_LIMIT_FACTOR = 3.0
#: ... and this much more (a scheduler's start of the steps, a slow first round), in seconds
TIME_LIMIT_EXTRA_S = 300.0


def iteration_seconds(size, mode, latency_s, bandwidth_GBps):
    """One iteration of a pair at ``size`` bytes over a link of ``latency_s`` and
    ``bandwidth_GBps`` (one direction): a ping-pong's round trip (uni), one exchange (bidir:
    both directions at once, full duplex)."""
    one_way = latency_s + size / (bandwidth_GBps * 1e9)
    return 2 * one_way if mode == "uni" else one_way


def round_seconds(size, mode, latency_s, bandwidth_GBps, iters=0, warmup=-1, budget=0.0, soak=False,
                  precision_cap=0.0):
    """The model of one concurrent round's wall seconds (its record's ``wall_s``): ROUND_FIXED_S,
    the warm-up and timed iterations (the payload's defaults where ``iters`` is 0 and ``warmup``
    -1; at most ``budget`` timed seconds, at least 10 iterations), SAMPLE_S per timed sample
    (and, with ``soak``, its data checked at SOAK_GBPS), and up to ``precision_cap`` seconds of
    samples added to reach a precision target (0: off)."""
    it = iteration_seconds(size, mode, latency_s, bandwidth_GBps)
    iters = iters or default_iters(size)
    warmup = warmup if warmup >= 0 else max(2, iters // 10)
    timed = min(iters, max(10, int(budget / it))) if budget else iters
    samples = math.ceil(timed / default_batch(size, iters))
    per_sample = SAMPLE_S + (size / (SOAK_GBPS * 1e9) if soak else 0.0)
    return ROUND_FIXED_S + (warmup + timed) * it + samples * per_sample + precision_cap


def job_seconds(rounds, nodes, sizes, latency_s, bandwidth_GBps, **kw):
    """The model of a pair matrix job's wall seconds: its start (JOB_START_S and
    JOB_START_PER_NODE_S a node) and ``rounds`` rounds of each size of ``sizes`` in both modes
    (round_seconds, its keywords ``kw``)."""
    start = JOB_START_S + JOB_START_PER_NODE_S * nodes
    return start + rounds * sum(round_seconds(s, m, latency_s, bandwidth_GBps, **kw)
                                for s in sizes for m in ("uni", "bidir"))


def time_limit_s(rounds, nodes, sizes, latency_s, bandwidth_GBps, **kw):
    """A pair matrix job's time limit, whole minutes: TIME_LIMIT_FACTOR times job_seconds plus
    TIME_LIMIT_EXTRA_S."""
    model = job_seconds(rounds, nodes, sizes, latency_s, bandwidth_GBps, **kw)
    return 60 * math.ceil((TIME_LIMIT_FACTOR * model + TIME_LIMIT_EXTRA_S) / 60)
