"""Issue 52's before/after table: each perf variable's spread from session to session.

Reads ReFrame session reports (report.json as `gpucomm nightly` or `reframe --report-file` writes
them) of repeated healthy sessions on one node, and per perf variable (the check's name without
its repeat and node, then the variable) gives the sessions n, the median value and the standard
deviation of the log of the session values in % (sd of log x ~ the relative spread), for a
"before" and an "after" set, side by side, with the issue's goal for the variable:
  device-driven paths (ccl, nvshmem, ipc-copy; the data paths' copy engines and copy kernels): <= 1 % at >= 1 MiB,
  <= 3 % for an 8 B latency; host-driven paths (host, staging, gpu-aware-mpi): half the before
  spread, or the floor measured and stated.
With the within-run precision the reports carry (rfm.precision: rel_se per variable), the median
of the sessions' own rel_se in % sits beside it: a spread far above it is launch-to-launch noise.
Beside the sd, the robust spread (rsd: the normal-scaled median absolute deviation of the logs,
scipy.stats.median_abs_deviation): an sd far above its rsd is one or two outlying sessions, not a
spread every session shares.  The goal is judged on the sd.

Usage (repository root):
  python bench/studies/spread.py OUTDIR --before 'GLOB' ... --after 'GLOB' ...
writes OUTDIR/spread.csv and OUTDIR/spread.md; a GLOB names report files (quote it).
"""

import argparse
import glob
import json
import os
import re
import sys

import numpy as np
import pandas as pd
from scipy.stats import median_abs_deviation

DEVICE = ("ccl", "nvshmem", "ipc-copy", "ce", "sm", "datapaths")  # ce, sm: the data paths' copy engine, kernel
HOST = ("host", "staging", "gpu-aware-mpi")
MIN_N = 3


def check_name(tc):
    """'HealthCheck %operation=pingpong %.repeat_no=3' -> 'HealthCheck pingpong' (no repeat, node)."""
    parts = [p for p in tc["display_name"].split() if not p.startswith(("%.", "@"))]
    return " ".join([parts[0]] + [p.split("=", 1)[-1] for p in parts[1:]])


def rows(paths, label):
    out = []
    for path in paths:
        try:
            rep = json.load(open(path))
        except (OSError, ValueError) as exc:
            print(f"spread: {path}: not read ({exc})", file=sys.stderr)
            continue
        for run in rep.get("runs", []):
            for tc in run.get("testcases", []):
                if tc.get("result") != "pass":
                    continue
                prec = tc.get("precision") or {}
                for key, val in (tc.get("perfvalues") or {}).items():
                    var = key.split(":")[-1]
                    if val[0] is None or not np.isfinite(val[0]) or val[0] <= 0:
                        continue
                    rel = (prec.get(var) or {}).get("rel_se")
                    out.append({"set": label, "variable": f"{check_name(tc)} {var}", "session": path,
                                "value": float(val[0]), "unit": val[4], "rel_se": rel})
    return out


def goal(variable, before_sd):
    """The issue's goal for a variable's spread (in %), and its kind."""
    name = variable.lower()
    method = next((m for m in DEVICE + HOST if re.search(rf"(^|[ _]){re.escape(m)}([ _]|$)", name)), "")
    small = "8b" in name or "latency" in name
    if method in DEVICE:
        return (3.0 if small else 1.0), "device"
    if method in HOST or not method:
        return (before_sd / 2 if before_sd == before_sd else float("nan")), "host"
    return float("nan"), "?"


def table(df):
    per = []
    for (label, var), g in df.groupby(["set", "variable"]):
        # one value per session (a session with repeats: their median)
        s = g.groupby("session")["value"].median()
        rel = g["rel_se"].dropna()
        per.append({"set": label, "variable": var, "unit": g["unit"].iloc[0], "n": len(s),
                    "median": float(s.median()),
                    "sd_log_pct": 100 * float(np.log(s).std(ddof=1)) if len(s) >= MIN_N else float("nan"),
                    "rsd_log_pct": 100 * float(median_abs_deviation(np.log(s), scale="normal"))
                    if len(s) >= MIN_N else float("nan"),
                    "within_rel_se_pct": 100 * float(rel.median()) if len(rel) else float("nan")})
    t = pd.DataFrame(per)
    wide = t.pivot(index="variable", columns="set", values=["n", "median", "sd_log_pct", "rsd_log_pct",
                                                                  "within_rel_se_pct"])
    wide.columns = [f"{a}_{b}" for a, b in wide.columns]
    wide = wide.reset_index()
    for col in ("n_before", "n_after", "sd_log_pct_before", "sd_log_pct_after", "rsd_log_pct_before",
                "rsd_log_pct_after", "within_rel_se_pct_after"):
        if col not in wide:
            wide[col] = float("nan")
    goals = [goal(v, b) for v, b in zip(wide["variable"], wide["sd_log_pct_before"])]
    wide["kind"] = [k for _, k in goals]
    wide["goal_pct"] = [g for g, _ in goals]
    wide["met"] = [("yes" if a <= g else "no") if a == a and g == g else "-"
                   for a, g in zip(wide["sd_log_pct_after"], wide["goal_pct"])]
    cols = ["variable", "kind", "n_before", "sd_log_pct_before", "rsd_log_pct_before", "n_after",
            "sd_log_pct_after", "rsd_log_pct_after", "within_rel_se_pct_after", "goal_pct", "met",
            "median_before", "median_after"]
    return wide[[c for c in cols if c in wide]].sort_values(["kind", "variable"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--before", nargs="*", default=[])
    ap.add_argument("--after", nargs="+", required=True)
    a = ap.parse_args(argv)
    found = {label: sorted(p for pat in pats for p in glob.glob(pat))
             for label, pats in (("before", a.before), ("after", a.after))}
    if not found["after"]:
        sys.exit("spread: no report matches --after")
    df = pd.DataFrame(rows(found["before"], "before") + rows(found["after"], "after"))
    t = table(df)
    os.makedirs(a.out, exist_ok=True)
    t.to_csv(os.path.join(a.out, "spread.csv"), index=False, float_format="%.3f")
    with open(os.path.join(a.out, "spread.md"), "w") as fp:
        fp.write(f"sessions: before {len(found['before'])} reports, after {len(found['after'])}\n\n")
        fp.write(t.to_markdown(index=False, floatfmt=".2f") + "\n")
    print(f"before: {len(found['before'])} reports; after: {len(found['after'])}")
    print(t.to_string(index=False, float_format=lambda x: f"{x:.2f}"))


if __name__ == "__main__":
    main()
