"""The nightly drift verdict as the report shows it: its words (the health text's lines, a node's
FAIL line), its plots (each failed or suspect variable's nights) and its CSVs (drift.csv: the
newest night's rows; drift-all.csv: every night judged).  The verdict itself is
analysis/drift.py's."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import statcore as sc
from ..drift import (
    ALPHA_NIGHT,
    BLIND_LOSS,
    MIN_NIGHTS,
    NIGHT_GAP_H,
    NODE_KEY,
    REPLAYED_FALSE_ALARMS_PER_YEAR,
    SCORE_TEST,
    VAR_KEY,
    Drift,
    judge_nights,
)


def _fmt(v: float, unit: str) -> str:
    return f"{v:.4g} {unit}" if np.isfinite(v) else "n/a"


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def mark_nodes(text: str, d: Drift) -> str:
    """The health text's per-node lines (``PASS  NODE  SYSTEM:PARTITION  ...``) of the nodes the
    drift verdict failed, made FAIL lines that say why."""
    out = []
    failed = d.failed.groupby(NODE_KEY).size() if not d.failed.empty else {}
    for line in text.split("\n"):
        for key, count in dict(failed).items():
            head = f"PASS  {key[2]}  {key[0]}:{key[1]}  "
            if line.startswith(head):
                line = "FAIL" + line[4:] + f", nightly drift: {_n(int(count), 'variable')} slower than its history"
        out.append(line)
    return "\n".join(out)


def reason(row: pd.Series) -> str:
    """One line naming node, variable, history centre, change and z of a flagged variable (the
    node's score: its median loss over its variables)."""
    if row["test"] == SCORE_TEST:
        return (f"{row['node']} {row['system']}:{row['partition']}: slower on many variables at once: node score "
                f"{row['value']:.2f} against its history's {row['median']:.2f} ({int(row['history'])} nights), "
                f"median loss {row['loss']:.1%}, z {row['z']:.1f} > {row['b1']:.1f} (one night)")
    what = {"step": "tonight, confirmed by a second measurement the same night",
            "two nights": "two nights in a row",
            "drift": f"slow drift: CUSUM {row['cusum']:.1f} above h={row['h']:.1f} two nights in a row",
            "step, one measurement": "one measurement: retest tonight to confirm",
            "step, not confirmed": "the night's other measurements do not confirm it"}.get(row["rule"], row["rule"])
    bound = row["b1"] if str(row["rule"]).startswith("step") else row["b2"]
    z = f"z {row['z']:.1f}" + (f" > {bound:.1f}" if row["rule"] != "drift" else "")
    return (f"{row['node']} {row['system']}:{row['partition']} {row['test']}: {row['var']} = "
            f"{_fmt(row['value'], row['unit'])}, history centre {_fmt(row['median'], row['unit'])} "
            f"({int(row['history'])} nights), change {row['change']:+.1%}, {z} ({what})")


def _some(names: list, shown: int = 5) -> str:
    """The first ``shown`` names, and how many more."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def lines(d: Drift) -> list:
    """The drift verdict as the first lines of the health text: flagged variables first, then a
    count, then what was left out and how many nights are missing."""
    out = []
    if d.latest.empty:
        return ["nightly drift: no history: this night is judged by its references alone"]
    for _, row in d.failed.iterrows():
        out.append(f"DRIFT FAIL  {reason(row)}")
    for _, row in d.suspects.iterrows():
        out.append(f"SUSPECT     {reason(row)}")
    lat = d.latest[d.latest["test"] != SCORE_TEST]
    judged = lat[~lat["status"].isin(["new", "blind"])]
    nodes = lat.groupby(NODE_KEY).size()
    head = (f"nightly drift: {_n(len(d.failed), 'variable')} failed, {len(d.suspects)} suspect, {len(judged)} of "
            f"{len(lat)} judged against their node's own history ({_n(len(nodes), 'node')}; false alarms per node "
            f"and 365 healthy nights: {ALPHA_NIGHT * 365:.0f} by design, {REPLAYED_FALSE_ALARMS_PER_YEAR:g} on the "
            "reference node's real nights replayed, docs/nightly.md)")
    out.insert(0, head)
    new = lat[lat["status"] == "new"]
    short: dict[tuple, list] = {}  # nodes in the same state: one line (a batch of 1,024 new nodes: not 1,024)
    for key, g in new.groupby(NODE_KEY):
        short.setdefault((key[0], key[1], len(g), int(g["history"].max())), []).append(str(key[2]))
    for (system, part, nvars, have), names in short.items():
        who = (f"{names[0]} {system}:{part}: {nvars} variables have" if len(names) == 1 else
               f"{len(names)} nodes of {system}:{part} ({_some(names)}): {nvars} variables each have")
        out.append(f"nightly drift: {who} {have} healthy nights of history, {MIN_NIGHTS - have} more needed: "
                   "references only")
    blind = lat[lat["status"] == "blind"]
    for key, g in blind.groupby(NODE_KEY):
        worst = g.sort_values("sees").iloc[0]
        out.append(f"nightly drift: {key[2]} {key[0]}:{key[1]}: {len(g)} variables too noisy to see a node "
                   f"{BLIND_LOSS:.0%} slower over two nights (e.g. {worst['test']} {worst['var']}: a loss of "
                   f"{worst['sees']:.0%} at best): references only")
    out += [f"nightly drift: {n}" for n in d.notes]
    return out


def plot(d: Drift, outdir: str) -> list:
    """One PNG per node with flagged (failed or suspect) variables: each variable's nights, the
    history centre and the bound, the flagged night marked; the paths written."""
    flagged = pd.concat([d.failed, d.suspects])
    if flagged.empty:
        return []
    import os

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    paths = []
    for key, rows in flagged.groupby(NODE_KEY):
        fig, axes = plt.subplots(len(rows), 1, figsize=(8, 2.6 * len(rows)), squeeze=False)
        for ax, (_, row) in zip(axes[:, 0], rows.iterrows()):
            sel = (d.table[VAR_KEY] == row[VAR_KEY]).all(axis=1)
            hist = d.table[sel].sort_values("night")
            worse = float(sc.worse_sign(row["unit"])) if row["unit"] in sc.PERF_UNIT_DIRECTION else 1.0
            bound = np.exp(worse * (hist["median_bad"] + hist["b1"] * hist["se"]))
            when = pd.to_datetime(hist["time"], unit="s", utc=True)
            ax.plot(when, hist["value"], "o-", ms=3, lw=0.8, label=row["var"])
            ax.plot(when, hist["median"], "-", color="grey", lw=1, label="history centre")
            ax.plot(when, bound, "--", color="red", lw=1, label="bound (one night)")
            bad = hist[hist["status"].isin(("FAIL", "suspect"))]
            ax.plot(pd.to_datetime(bad["time"], unit="s", utc=True), bad["value"], "rx", ms=9,
                    label="flagged night")
            first = bad["time"].min()
            if np.isfinite(first):
                ax.axvline(pd.to_datetime(first, unit="s", utc=True), color="red", lw=0.6)
            span = pd.concat([hist["value"], hist["median"]]).dropna()
            if len(span):  # the values in view; an early night's wide bound may leave it
                pad = 0.05 * max(float(span.max() - span.min()), 0.01 * float(span.abs().max()))
                ax.set_ylim(float(span.min()) - pad, float(span.max()) + pad)
            ax.tick_params(axis="x", labelsize=7, labelrotation=30)
            ax.set_title(f"{row['test']}: {row['var']} ({row['status']}, {row['change']:+.1%})", fontsize=9)
            ax.set_ylabel(row["unit"])
            ax.legend(fontsize=7)
        fig.suptitle(f"{key[2]} {key[0]}:{key[1]}: nightly drift", fontsize=10)
        fig.tight_layout()
        name = "drift-" + "-".join(str(k) for k in key).replace("/", "_").replace(" ", "_") + ".png"
        path = os.path.join(outdir, name)
        fig.savefig(path, dpi=90)
        plt.close(fig)
        paths.append(path)
    return paths


def table_out(d: Drift) -> pd.DataFrame:
    """The newest night's rows as the report's drift.csv."""
    cols = VAR_KEY + ["unit", "status", "rule", "value", "median", "change", "loss", "z", "b1", "b2", "cusum", "h",
                      "sees", "history", "k", "time"]
    return d.latest.reindex(columns=cols)


def report_part(perf: pd.DataFrame, cases: pd.DataFrame, outdir: str, since: pd.Timestamp | None = None,
                night_gap_h: float = NIGHT_GAP_H) -> tuple[list, list, Drift]:
    """What ``gpucomm report`` adds: (lines to put first in its health text, plot PNGs, the verdict:
    ``.failed`` not empty fails the run); writes drift.csv (the newest night's rows) and
    drift-all.csv (none where no node had a night to judge against: every variable "new")."""
    import os
    d = judge_nights(perf, cases, since, night_gap_h)
    if not d.table.empty and d.judged:
        table_out(d).to_csv(os.path.join(outdir, "drift.csv"), index=False, float_format="%.6g")
        d.table.drop(columns=["value_bad", "median_bad"]).to_csv(os.path.join(outdir, "drift-all.csv"),
                                                                   index=False, float_format="%.6g")
    return lines(d), plot(d, outdir), d
