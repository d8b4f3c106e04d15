"""The committed health runs of the reference node (local:h200x2, 2x H200) replayed as nights
through the nightly drift verdict (gpucomm.analysis.drift; docs/nightly.md).

    python bench/studies/drift_replay.py OUT [--lower VAR --by 0.05 --nights 3]

Reads the 26 sessions of bench/results/2026-11-30-nvidia-h200-x2/{10-health,12-health,
13-health-validation} (the runs the shipped references were made from) and the later health
sessions of that folder (14-issue8 ... 19-nvshmem-bw: other trees of gpucomm, see their MANIFESTs),
each session a night (--night-gap 0), in the order they ran.  As the shipped references do, the
ipc-copy ping-pong variables of 10-health are left out (its signalling changed after them).
Their ReFrame results were judged at the time against the placeholder references before the
tolerance study; the 26 are the healthy runs the shipped references come from, so a case that
failed only its performance references counts as healthy here (said in summary.txt).

Writes OUT/drift-all.csv (every node, variable and night), OUT/summary.txt, and for --lower the
same with VAR (TEST:VAR) lowered by the fraction --by on the last --nights of the 26.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys

import numpy as np
import pandas as pd

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "src"))

from gpucomm.analysis import drift, inputs, statcore as sc  # noqa: E402
from gpucomm.analysis.report import drift_page  # noqa: E402

H200X2 = os.path.join(ROOT, "bench", "results", "2026-11-30-nvidia-h200-x2")
STUDY = ("10-health", "12-health", "13-health-validation")
LATER = ("14-issue8/report-health-1.json", "15-issue8-bw/report-health-1.json", "16-review/report-health.json",
         "17-layers/report-health-1.json", "17-layers/report-health-2.json",
         "19-nvshmem-bw/call1/report-health.json", "19-nvshmem-bw/call4/report-health-1.json",
         "19-nvshmem-bw/call4/report-health-2.json")


def study_paths() -> list:
    return sorted(p for d in STUDY for p in glob.glob(os.path.join(H200X2, d, "reports", "report-health-*.json")))


def later_paths() -> list:
    return [os.path.join(H200X2, p) for p in LATER]


def load(paths: list) -> tuple[pd.DataFrame, pd.DataFrame, list]:
    """(perf, cases, notes) of the sessions, prepared as the module docstring says."""
    data = inputs.load(paths)
    _, cases, perf = data.frames()
    notes = list(data.problems)
    early = perf["source"].str.contains("/10-health/") & perf["test"].str.contains("operation=pingpong") \
        & perf["var"].str.startswith("ipc-copy_")
    perf = perf[~early]
    notes.append(f"{int(early.sum())} ipc-copy ping-pong values of 10-health left out (its signalling changed after "
                 "them; the shipped references leave them out too)")
    perf_only = (cases["result"] == "fail") & (cases["fail_phase"] == "performance")
    notes.append(f"{int(perf_only.sum())} test cases that failed only their performance references of the time "
                 "counted as healthy (the 26 are the healthy runs the shipped references come from)")
    cases = cases.assign(result=cases["result"].where(~perf_only, "pass"))
    fixed = perf.merge(cases[inputs.CASE_KEY + ["session", "result"]], on=inputs.CASE_KEY + ["session"],
                       how="left", suffixes=("_old", ""))
    return fixed.drop(columns="result_old"), cases, notes


def lowered(perf: pd.DataFrame, var: str, by: float, sessions: list) -> pd.DataFrame:
    """``perf`` with ``var`` (TEST:VAR) lowered in performance by ``by`` in ``sessions``."""
    test, _, name = var.rpartition(":")
    sel = (perf["test"] == test) & (perf["var"] == name) & perf["session"].isin(sessions)
    if not sel.any():
        raise SystemExit(f"drift_replay: error: no values of {var} in those sessions")
    unit = perf.loc[sel, "unit"].iloc[0]
    factor = 1 / (1 - by) if sc.lower_is_better(unit) else 1 - by
    out = perf.copy()
    out.loc[sel, "value"] = out.loc[sel, "value"] * factor
    return out


def summary(d: drift.Drift, title: str) -> list:
    t = d.table
    fails = t[t["status"] == "FAIL"]
    sus = t[t["status"] == "suspect"]
    out = [f"## {title}", f"{t['night'].max() + 1} nights, {len(t.groupby(['test', 'var']))} variables, "
           f"{len(fails)} FAIL night-variables, {len(sus)} suspects"]
    for _, r in pd.concat([sus, fails]).sort_values(["night", "test", "var"]).iterrows():
        out.append(f"night {int(r['night'])} {r['status']}: {drift_page.reason(r)}")
    return out


def budget(perf: pd.DataFrame, night_gap_h: float, histories=(10, 30, 60)) -> list:
    """The error budget per variable of the reference node, as a markdown table: its night-to-night
    noise (spread of the 26 sessions' badness), its within-night noise (sessions of one device call,
    pooled), and the loss each rule finds with 99 % probability after ``histories`` nights, with
    one measurement a night (two nights in a row) and with two (the first night)."""
    import math

    study = perf[perf["source"].str.contains("/1[023]-health")]
    nights, _ = drift.measurements(study, study.assign(result="pass"), night_gap_h=night_gap_h)
    m = len(study.groupby(["test", "var"]))
    head = ["variable", "noise", "within"] + [f"{n} nights: {w}" for n in histories for w in ("k=1", "k=2")]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (test, var), g in study.groupby(["test", "var"]):
        unit = g["unit"].iloc[0]
        sign = sc.worse_sign(unit)
        bad = sc.badness(g["value"].to_numpy(dtype=float), sign)
        total = float(sc.spread(bad))
        groups = [sc.badness(x["value"].to_numpy(dtype=float), sign)
                  for _, x in nights[(nights["test"] == test) & (nights["var"] == var)].groupby("night")]
        within = min(drift._within(groups, np.arange(len(groups))), total)
        between = math.sqrt(max(0.0, total ** 2 - within ** 2))
        cells = []
        for n in histories:
            b1, b2 = drift.bounds(m, n - 1)
            se1 = math.sqrt(total ** 2 * (1 + 1 / n))
            se2 = math.sqrt((sc.location_sd(2) * within) ** 2 + between ** 2 + total ** 2 / n)
            cells += [f"{sc.detectable_loss(se1, b2, sc.POWER ** 0.5):.1%}", f"{sc.detectable_loss(se2, b1):.1%}"]
        short = test.replace("HealthCheck %operation=", "").replace("PairMatrixCheck %method=", "pairs ")
        out.append(f"| {short} {var} | {total:.2%} | {within:.2%} | " + " | ".join(cells) + " |")
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--lower", default=None, metavar="TEST:VAR")
    p.add_argument("--by", type=float, default=0.05)
    p.add_argument("--nights", type=int, default=2)
    p.add_argument("--night-gap", type=float, default=0.03, metavar="HOURS",
                   help="sessions less than HOURS apart are one night (default 0.03 h = 108 s: the sessions "
                        "of one device call, 60 s apart, are one night; 0: every session a night)")
    a = p.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    lines = []
    perf, cases, notes = load(study_paths())
    lines += [f"note: {n}" for n in notes]
    d = drift.judge_nights(perf, cases, night_gap_h=a.night_gap)
    d.table.to_csv(os.path.join(a.out, "drift-study.csv"), index=False, float_format="%.6g")
    lines += summary(d, f"the 26 sessions of the tolerance study (--night-gap {a.night_gap})")
    perf_all, cases_all, notes_all = load(study_paths() + later_paths())
    d_all = drift.judge_nights(perf_all, cases_all, night_gap_h=a.night_gap)
    d_all.table.to_csv(os.path.join(a.out, "drift-all.csv"), index=False, float_format="%.6g")
    lines += summary(d_all, "the 26 and the 8 later health sessions (other trees of gpucomm; "
                            f"--night-gap {a.night_gap})")
    if a.lower:
        nights, _ = drift.measurements(perf_all, cases_all, night_gap_h=a.night_gap)
        last = sorted(nights["night"].unique())[-a.nights:]
        sessions = sorted(set(nights.loc[nights["night"].isin(last), "session"]))
        d_low = drift.judge_nights(lowered(perf_all, a.lower, a.by, sessions), cases_all, night_gap_h=a.night_gap)
        d_low.table.to_csv(os.path.join(a.out, "drift-lowered.csv"), index=False, float_format="%.6g")
        lines += summary(d_low, f"all 34 with {a.lower} {a.by:.0%} lower on the last {a.nights} nights "
                                f"(nights {', '.join(str(n) for n in last)})")
    table = budget(perf, a.night_gap)
    with open(os.path.join(a.out, "budget.md"), "w") as fp:
        fp.write("\n".join(table) + "\n")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "summary.txt"), "w") as fp:
        fp.write(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
