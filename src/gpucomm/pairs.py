"""GPU pairs of one node: the round-robin schedule of disjoint pairs and the pair classes of a
partition (which pairs share one link type, hence one reference)."""


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
