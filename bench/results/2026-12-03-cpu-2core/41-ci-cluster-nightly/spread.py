"""The noise of a call of run.sh, from its committed files:
python3 spread.py CALLDIR [HEALTHY] -- per node and variable, the within-night spread (sd of the log
of a night's repeats, pooled) and the night-to-night spread of the nights' medians (sd of the log,
the first HEALTHY nights, default all), then, from the last night's drift-all.csv, the change each
variable's rules see with 99 % probability: two nights in a row (b2) and one night (b1)."""
import glob
import io
import json
import re
import sys
import tarfile
from collections import defaultdict

import numpy as np
import pandas as pd
from scipy import stats

call = sys.argv[1]
healthy = int(sys.argv[2]) if len(sys.argv) > 2 else None
vals = defaultdict(lambda: defaultdict(list))
with tarfile.open(f"{call}/reports.tgz") as tar:
    for m in sorted(tar.getmembers(), key=lambda m: m.name):
        night = m.name.split("/")[0]
        doc = json.load(io.TextIOWrapper(tar.extractfile(m)))
        for run in doc["runs"]:
            for c in run["testcases"]:
                node = re.search(r"%\.nid=(\S+)", c["display_name"]).group(1)
                op = re.search(r"operation=(\S+)", c["display_name"]).group(1)
                for k, v in (c.get("perfvalues") or {}).items():
                    vals[(node, op, k.split(":")[-1])][night].append(v[0])
print(f"{'node':5} {'operation':9} {'variable':18} within between")
for key in sorted(vals):
    logs = [np.log(v) for _, v in sorted(vals[key].items())][:healthy]
    within = [np.var(x, ddof=1) for x in logs if len(x) > 1]
    w = np.sqrt(np.mean(within)) if within else float("nan")
    b = np.std([np.median(x) for x in logs], ddof=1)
    print(f"{key[0]:5} {key[1]:9} {key[2]:18} {w:6.3f} {b:7.3f}")
last = sorted(glob.glob(f"{call}/n*/drift-all.csv"))[-1]
d = pd.read_csv(last)
d = d[d["night"] == d["night"].max()]
z99 = stats.norm.isf(0.01)
print(f"\nthe change seen with 99 % probability ({last}: se, b1, b2 of its last night)")
for _, r in d.iterrows():
    two, one = np.expm1((r.b2 + z99) * r.se), np.expm1((r.b1 + z99) * r.se)
    print(f"{r.node:5} {r.test.split('=')[1]:9} {r['var']:18} se {r.se:.3f}: two nights {two:7.0%}, one {one:7.0%}")
