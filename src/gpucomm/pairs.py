"""Pairs of ranks: the round-robin schedule of disjoint pairs, the pair classes of a partition
(which GPU pairs of a node share one link type, hence one reference), and how far two nodes are
apart on the network (the class of a pair of nodes)."""

from .constants import PLACEMENTS


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
