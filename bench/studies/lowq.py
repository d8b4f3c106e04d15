"""Is a low quantile of an 8 B latency steadier than its median, session to session?

Reads the committed payload results (gpucomm_results*.json, inside the folders' .tgz) of
repeated healthy sessions, takes every 8 B latency record (time_us: median, p05, min) and,
per variable and data set, gives the standard deviation of the log of each statistic across
launches (sd of log x ~ the relative spread).  A second table gives the medians' spread over
the 2-GPU node's 26 committed health sessions (their ReFrame reports keep only the median).

Verdict per variable: 'p05' (or 'min') where that statistic's spread is at most 2/3 of the
median's over at least 10 launches; 'median' where it is not; 'too few' under 10 launches.

Usage (repository root): python bench/studies/lowq.py OUTDIR
writes OUTDIR/lowq.csv, OUTDIR/median26.csv and OUTDIR/lowq.md (both tables, markdown).
"""

import glob
import json
import os
import re
import sys
import tarfile

import numpy as np
import pandas as pd

X2 = "bench/results/2026-11-30-nvidia-h200-x2"
H1 = "bench/results/2026-12-03-nvidia-h200/40-gpu-cluster-acceptance/call"
#: (data set, tarball): the health sessions' outputs on the 2-GPU node (one session each where
#: a folder kept only its last; 21-every-method's calls hold two), and the 1-GPU node's three
#: healthy acceptance sessions of four emulated nodes (each launch its own folder)
SOURCES = [("h200x2 health", f"{X2}/{t}") for t in (
    "10-health/reports.tgz", "12-health/reports.tgz", "13-health-validation/reports.tgz",
    "17-layers/outputs.tgz", "19-nvshmem-bw/call1/outputs.tgz",
    "21-every-method/call2/outputs.tgz", "21-every-method/call3/outputs.tgz")] + [
    ("h200x1 acceptance (4 emulated nodes)", f"{H1}/node-healthy-{i}-outputs.tgz") for i in (1, 2, 3)]
#: the 2-GPU node's health sessions' ReFrame reports (medians only)
REPORTS = [f"{X2}/{d}/reports/report-health-*.json" for d in ("10-health", "12-health", "13-health-validation")]
CHECKS = re.compile(r"(HealthCheck|PairMatrixCheck|PingPongCheck|AllReduceCheck|AllToAllCheck)_")
STATS = ("median", "p05", "min")
MIN_N, STEADIER = 10, 2 / 3


def variable(rec):
    """The perf variable's family of an 8 B record: 'op method' (pair matrix: with its pair)."""
    if rec["op"] == "pair-matrix":
        if rec.get("scope") != "single" or rec.get("mode") != "uni":
            return None
        return f"pair-matrix {rec['method']} latency_8B_{rec['pair'][0]}-{rec['pair'][1]}"
    return f"{rec['op']} {rec['method']} latency_8B"


def launches(source, path):
    """One row per 8 B record of each results file in the tarball ``path``."""
    rows = []
    with tarfile.open(path) as tar:
        for m in tar.getmembers():
            name = os.path.basename(m.name)
            if not (name.startswith("gpucomm_results") and name.endswith(".json")) or not CHECKS.search(m.name):
                continue
            data = json.load(tar.extractfile(m))
            for rec in data.get("results", []):
                t = rec.get("time_us")
                var = variable(rec) if rec.get("size") == 8 and isinstance(t, dict) else None
                if var:
                    rows.append({"set": source, "variable": var, "launch": f"{path}:{m.name}",
                                 **{s: t[s] for s in STATS}})
    return rows


def spread(df):
    """Per (set, variable): launches, each statistic's sd of log (%), the verdict."""
    out = []
    for (src, var), g in df.groupby(["set", "variable"]):
        row = {"set": src, "variable": var, "n": len(g)}
        for s in STATS:
            row[f"sd_{s}_%"] = 100 * float(np.log(g[s]).std(ddof=1))
        row["p05/median"] = row["sd_p05_%"] / row["sd_median_%"]
        row["min/median"] = row["sd_min_%"] / row["sd_median_%"]
        low = min(("p05", "min"), key=lambda s: row[f"sd_{s}_%"])
        if row["n"] < MIN_N:
            row["verdict"] = "too few"
        elif row[f"sd_{low}_%"] <= STEADIER * row["sd_median_%"]:
            row["verdict"] = low
        else:
            row["verdict"] = "median"
        out.append(row)
    return pd.DataFrame(out)


def medians26():
    """The 8 B latencies' medians over the 2-GPU node's committed health reports."""
    rows = []
    for path in sorted(p for pat in REPORTS for p in glob.glob(pat)):
        for run in json.load(open(path))["runs"][:1]:
            for tc in run["testcases"]:
                for k, v in (tc.get("perfvalues") or {}).items():
                    var = k.split(":")[-1]
                    if "latency_8B" in var and v[0] is not None:
                        check = tc["name"].split()[0] + " " + tc["name"].split("=")[-1]
                        rows.append({"variable": f"{check} {var}", "session": path, "median": v[0]})
    df = pd.DataFrame(rows)
    return (df.groupby("variable")["median"]
            .agg(n="count", sd_median_pct=lambda x: 100 * float(np.log(x).std(ddof=1))).reset_index())


def main(out):
    os.makedirs(out, exist_ok=True)
    df = pd.DataFrame([r for src, p in SOURCES for r in launches(src, p)])
    table = spread(df).sort_values(["set", "variable"])
    table.to_csv(os.path.join(out, "lowq.csv"), index=False, float_format="%.3f")
    m26 = medians26()
    m26.to_csv(os.path.join(out, "median26.csv"), index=False, float_format="%.3f")
    with open(os.path.join(out, "lowq.md"), "w") as fp:
        fp.write(table.to_markdown(index=False, floatfmt=".2f") + "\n\n")
        fp.write(m26.to_markdown(index=False, floatfmt=".2f") + "\n")
    print(table.to_string(index=False, float_format=lambda x: f"{x:.2f}"))
    print(m26.to_string(index=False, float_format=lambda x: f"{x:.2f}"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
