"""The report's noise section (checks/noise.py runs): quiet against noisy per victim size, and the
slowdown per layout, this run and the earlier ones.

Read from the perf variables of the NoiseCheck test cases (ReFrame reports, databases,
perflogs): quiet_time_<size>, noisy_time_<size> (us), victim_slowdown_<size>, quiet_spread_<size>
and victim_spread_<size> ((p95 - p05) / median within a run), aggressor_GBps.  A test case's
victim, method and layout come from its name (``NoiseCheck %method=... %victim=... %layout=...``).

* ``split(sweeps)``: the noise jobs' own results files (contract.NOISE_FILES) out of the sweeps,
  so that a victim's quiet and noisy runs are not mixed into the per-size plots of its operation;
* ``section(perf, outdir)``: (table heading, HTML, note) and [(plot heading, [png])], or None
  without noise runs; the table is written to congestion.csv too.
"""

from __future__ import annotations

import os
import re

import pandas as pd

from ...contract import NOISE_FILES
from ...sizes import parse_size

CHECK = "NoiseCheck"
_VAR = re.compile(r"^(quiet_time|noisy_time|victim_slowdown|victim_spread|quiet_spread)_(\w+)$")
COLUMNS = ["system", "partition", "victim", "method", "layout", "size", "runs", "quiet_us",
           "noisy_us", "slowdown", "slowdown_min", "slowdown_max", "quiet_spread", "noisy_spread",
           "aggressor_GBps", "result"]


def split(sweeps: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(sweeps without the noise jobs' results files, those rows)."""
    if sweeps.empty:
        return sweeps, sweeps
    noise = sweeps["source"].map(lambda p: os.path.basename(str(p)) in NOISE_FILES.values())
    return sweeps[~noise].reset_index(drop=True), sweeps[noise].reset_index(drop=True)


def params(test: str) -> dict[str, str]:
    """{param: value} of a test case name ('NoiseCheck %method=ccl %layout=apart ...')."""
    return dict(re.findall(r"%(\w+)=(\S+)", str(test)))


def noise_perf(perf: pd.DataFrame) -> pd.DataFrame:
    """The NoiseCheck perf values, one row per (run, variable), with victim, method, layout,
    the variable's kind and its size label."""
    if perf.empty:
        return perf
    df = perf[perf["test"].astype(str).str.startswith(CHECK)].copy()
    if df.empty:
        return df
    p = df["test"].map(params)
    for key in ("victim", "method", "layout"):
        df[key] = p.map(lambda d, k=key: d.get(k, "?"))
    m = df["var"].astype(str).str.extract(_VAR)
    df["kind"], df["size_label"] = m[0], m[1]
    return df


def table(perf: pd.DataFrame) -> pd.DataFrame:
    """Per partition, victim, method, layout and size: this run's quiet and noisy medians, its
    slowdown and spreads, the slowdown's range over every run read, the aggressor's GB/s."""
    df = noise_perf(perf)
    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    key = ["system", "partition", "victim", "method", "layout"]
    rows = []
    for k, g in df.groupby(key):
        this = g[~g["history"].astype(bool)]
        this = this[this["time"] == this["time"].max()] if not this.empty else g[g["time"] == g["time"].max()]
        agg = this[this["var"] == "aggressor_GBps"]["value"]
        for label, s in g[g["kind"].notna()].groupby("size_label"):
            now = this[this["size_label"] == label].set_index("kind")["value"]
            slow = s[s["kind"] == "victim_slowdown"]["value"]
            rows.append(dict(zip(key, k), size=label, runs=int(slow.size),
                             quiet_us=now.get("quiet_time"), noisy_us=now.get("noisy_time"),
                             slowdown=now.get("victim_slowdown"), slowdown_min=slow.min(),
                             slowdown_max=slow.max(), quiet_spread=now.get("quiet_spread"),
                             noisy_spread=now.get("victim_spread"),
                             aggressor_GBps=agg.iloc[0] if len(agg) else None,
                             result=this["result"].iloc[0] if len(this) else None))
    out = pd.DataFrame(rows, columns=COLUMNS)
    out["_size"] = out["size"].map(_bytes)
    return out.sort_values(key + ["_size"]).drop(columns="_size").reset_index(drop=True)


def _bytes(label):
    try:
        return parse_size(label.replace("iB", "").replace("B", ""))
    except Exception:  # noqa: BLE001 - a label we did not write: sort it last
        return 1 << 62


def plot(df: pd.DataFrame, where: str, victim: str, path: str) -> None:
    """Quiet against noisy median per size and layout (every run read: the spread between
    runs), and the slowdown per layout."""
    import matplotlib.pyplot as plt

    from .render import _save
    layouts = sorted(df["layout"].unique())
    sizes = sorted(df["size_label"].dropna().unique(), key=_bytes)
    fig, axes = plt.subplots(1, len(sizes) + 1, figsize=(4.2 * (len(sizes) + 1), 3.6))
    for ax, label in zip(axes, sizes):
        data, names = [], []
        for lay in layouts:
            for kind, short in (("quiet_time", "quiet"), ("noisy_time", "noisy")):
                v = df[(df["layout"] == lay) & (df["size_label"] == label) & (df["kind"] == kind)]["value"]
                data.append(v.dropna().values)
                names.append(f"{lay}\n{short}")
        ax.boxplot(data, showfliers=True)
        ax.set_xticks(range(1, len(names) + 1), names, fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("median time per run (us)")
        ax.set_title(f"{where} {victim} {label}: quiet vs noisy", fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    ax = axes[-1]
    width = 0.8 / max(len(sizes), 1)
    for i, label in enumerate(sizes):
        med = [df[(df["layout"] == lay) & (df["size_label"] == label) &
                  (df["kind"] == "victim_slowdown")]["value"].median() for lay in layouts]
        ax.bar([j + i * width for j in range(len(layouts))], med, width, label=label)
    ax.axhline(1.0, color="#444", lw=0.8)
    ax.set_xticks([j + width * (len(sizes) - 1) / 2 for j in range(len(layouts))], layouts, fontsize=8)
    ax.set_ylabel("slowdown (noisy / quiet), median of runs")
    ax.set_title(f"{where} {victim}: slowdown per layout", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    _save(fig, path)


def section(perf: pd.DataFrame, outdir: str) -> tuple[tuple[str, str, str], list[tuple[str, list[str]]]] | None:
    """(table entry, plot sections) of the noise runs in ``perf``, or None without any."""
    t = table(perf)
    if t.empty:
        return None
    t.to_csv(os.path.join(outdir, "congestion.csv"), index=False, float_format="%.6g")
    from .render import _table, slug
    df = noise_perf(perf)
    plots = []
    for (system, partition, victim, method), g in df[df["kind"].notna()].groupby(
            ["system", "partition", "victim", "method"]):
        where = f"{system}:{partition}"
        path = os.path.join(outdir, f"noise_{slug(system, partition, victim, method)}.png")
        plot(g, f"{where} {method}", victim, path)
        plots.append(path)
    note = ("Victim alone (quiet) and under the aggressor (noisy), median time per run in us; "
            "slowdown = noisy / quiet of this run, with its range over every run read; spread = "
            "(p95 - p05) / median within a run; layouts: shared-link (victim across the "
            "inter-switch links the aggressor loads), same-switch, apart.")
    return ("Network noise: quiet vs noisy, slowdown per layout", _table(t), note), \
        [("Network noise", plots)] if plots else []
