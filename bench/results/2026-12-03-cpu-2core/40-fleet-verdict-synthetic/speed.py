"""The speed benchmark of gpucomm acceptance: a synthetic session of 1024 nodes x 5 repeats x 30
variables (gpucomm.analysis.fleetsim session) judged by the command, and a node pair matrix's
rounds across 1024 nodes judged per node (gpucomm.analysis.acceptance.judge_pairs)."""
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd

from gpucomm.analysis.acceptance import judge_pairs
from gpucomm.pairs import tournament

with tempfile.TemporaryDirectory() as tmp:
    report = f"{tmp}/s.json"
    subprocess.run([sys.executable, "-m", "gpucomm.analysis.fleetsim", "session", "--nodes", "1024", "--k", "5",
                    "--out", report, "--slow", "nid00007"], check=True)
    t0 = time.perf_counter()
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-m", "gpucomm", "acceptance", report, "--out", f"{tmp}/o"],
                          capture_output=True, text=True)
    took = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = cpu1.ru_utime - cpu0.ru_utime + cpu1.ru_stime - cpu0.ru_stime
    print("\n".join(proc.stdout.splitlines()[-6:]))
    print(f"gpucomm acceptance, 1024 nodes x 5 repeats x 30 variables: exit {proc.returncode}, {took:.1f} s wall, "
          f"{cpu:.1f} s CPU (the command, start-up and reading the 16 MB report included)")
n = 1024
nodes = [f"n{i:04d}" for i in range(n)]
var, val = [], []
rng = np.random.default_rng(1)
for rnd in tournament(n):
    for i, j in rnd:
        var.append(f"conc_uni_256KiB_{nodes[i]}-{nodes[j]}")
        val.append(10.0 * np.exp(rng.normal(0, 0.01)) * (0.5 if 5 in (i, j) else 1))
df = pd.DataFrame({"var": var, "value": val, "unit": "GB/s"})
t0, c0 = time.perf_counter(), time.process_time()
found, _ = judge_pairs(df, nodes)
print(f"node pair matrix rounds, {n} nodes, {len(df)} pairs: judged in {time.perf_counter() - t0:.1f} s wall, "
      f"{time.process_time() - c0:.1f} s CPU; "
      f"drained {sorted(found)}")
