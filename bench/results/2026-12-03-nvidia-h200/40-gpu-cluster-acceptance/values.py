"""Per (check, variable) over ReFrame reports of repeated, distributed sessions: min, median and
max of the values, the within-node spread (median over the nodes of the standard deviation of
the logarithms) and each node's geometric mean; the node is the display name's %.nid=.

    python3 values.py REPORT.json [REPORT.json ...]
"""

import collections
import json
import re
import sys

import numpy as np

vals = collections.defaultdict(lambda: collections.defaultdict(list))
for path in sys.argv[1:]:
    for case in json.load(open(path))["runs"][0]["testcases"]:
        nid = re.search(r"%\.nid=(\S+)", case["display_name"])
        for key, value in (case.get("perfvalues") or {}).items():
            vals[(case["name"], key.split(":")[-1])][nid.group(1) if nid else "?"].append(value[0])
for (name, var), nodes in sorted(vals.items()):
    every = np.concatenate([np.array(v) for v in nodes.values()])
    within = np.median([np.std(np.log(v), ddof=1) for v in nodes.values() if len(v) > 1])
    means = ", ".join(f"{n} {np.exp(np.mean(np.log(v))):.3g}" for n, v in sorted(nodes.items()))
    print(f"{name:28} {var:13} n={every.size} min {every.min():.3g} median {np.median(every):.3g} "
          f"max {every.max():.3g} within-node sd(log) {within:.3f}; node means: {means}")
