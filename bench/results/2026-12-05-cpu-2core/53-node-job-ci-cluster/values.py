"""The values of node-job sessions (ReFrame reports), per inner check, variable and node: the 5
repeats, and each node's median of its repeats in the fast mode (8 B latency under SLOW_US, the
ranks on their own cores) against the median of the other nodes' (the slow node's loss where
the two modes are told apart by hand); the count of jobs in the slow mode.

    python3 values.py SESSION.json...
"""

import collections
import json
import statistics
import sys

#: a ping-pong 8 B latency above this (us) is the slow mode (two ranks on one core)
SLOW_US = 15.0


def table(path):
    cases = json.load(open(path))["runs"][0]["testcases"]
    vals, slow_jobs = collections.defaultdict(dict), 0
    for c in cases:
        nid = c["display_name"].split("%.nid=")[1].split()[0]
        rep = int(c["display_name"].split("%.repeat_no=")[1].split()[0])
        perf = {k.split(":", 2)[2]: v[0] for k, v in (c.get("perfvalues") or {}).items()}
        fast = perf.get("PingPongCheck %method=host:latency_8B", 0) < SLOW_US
        slow_jobs += not fast
        for k, v in perf.items():
            vals[k][(nid, rep)] = (v, fast)
    print(f"{path}: {slow_jobs} of {len(cases)} node jobs in the slow mode (ping-pong 8 B > {SLOW_US:g} us)")
    for var in sorted(vals):
        nodes = sorted({n for n, _ in vals[var]})
        print(f"  {var}")
        for n in nodes:
            mine = [vals[var][(n, r)] for r in range(5) if (n, r) in vals[var]]
            fast = [v for v, f in mine if f]
            others = [v for (m, _), (v, f) in vals[var].items() if m != n and f]
            ratio = (f"{statistics.median(fast) / statistics.median(others):.3f}"
                     if fast and others else "-")
            print(f"    {n}: {' '.join(f'{v:.3g}' + ('' if f else '*') for v, f in mine)}   "
                  f"fast-mode median / others' {ratio}")


if __name__ == "__main__":
    for p in sys.argv[1:]:
        table(p)
