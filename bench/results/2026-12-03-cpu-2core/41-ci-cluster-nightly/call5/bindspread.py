"""Spread of call 5's jobs (bind.sh): per binding, operation, node and size, the 6 values (8 B:
median latency in us; 1 MiB: goodput in GB/s) and their sd of log.  python3 bindspread.py DIR"""
import collections
import glob
import json
import os
import sys

import numpy as np

values = collections.defaultdict(list)
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    mode, op, node, _rep = os.path.basename(path)[:-5].split("-")
    for r in json.load(open(path))["results"]:
        values[(mode, op, node, r["size"])].append(r["time_us"]["median"] if r["size"] == 8 else r["goodput_GBps"])
print("binding op       node size     sd(log)  values")
for (mode, op, node, size), v in sorted(values.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][3], kv[0][0])):
    a = np.array(v)
    print(f"{mode:7} {op:8} {node} {size:8} {np.std(np.log(a), ddof=1):7.3f}  {' '.join(f'{x:.2f}' for x in a)}")
