"""Acceptance of a batch of nodes against the fleet: ReFrame sessions in (the per-node checks run
with ``--distribute=all``, best with ``--repeat=k``; the node pair matrix across the nodes), a drain
list, a pass list, a suspect list and the noise it was judged at out.

    gpucomm acceptance SESSION [SESSION...] [--out DIR] [--force] [--class CLASS.json]
                       [--alpha 1e-3] [--suspect-alpha 0.01] [--min-loss 0.01] [--target-loss 0.035]
                       [--variables REGEX]

SESSION: a ReFrame JSON run report (``--report-file``, config/results.py's per-session report), or
the uuid of a session in ReFrame's results storage.  Several sessions are pooled: their repeats of
each (check, variable, node) are one sample (a retest session of some nodes added later, too).

Rule (gpucomm.analysis.fleetrule; the noise model of gpucomm.analysis.noisemodel): per check and
perf variable, every node's repeats give its value (a skipped mean of the log values, robust to a
transiently slow repeat); the within-node spread is pooled from the repeats of all nodes, the
between-node spread from the other nodes (or the class file's, ``--class``, where larger; never
below a floor); a node's z is its value's distance from the other nodes' centre in standard
errors.  A node is flagged on a variable where its z is above the bound that lets at most
``--alpha`` healthy nodes in all be flagged on any of its variables (Bonferroni over its variables,
Student's t for the estimated spreads) and it is at least ``--min-loss`` slower.  A node flagged
with MIN_FINAL or more repeats (the retest pooled in) is drained.  A node with fewer is screened
at the looser ``--suspect-alpha`` (a suspect costs a retest, not a drain; with one repeat and a few
nodes the final bound is out of reach of any loss): flagged there, it is a suspect (suspects.csv:
the retest to run).  noise.csv says, per variable, the spreads it was
judged at and the smallest loss it finds with 99 % probability; where that is above
``--target-loss``: "cannot judge at k=K: needs k >= K2".

A node is also drained where a check failed on it (sanity, run: anything but its own performance
references, which are values the fleet rule judges), where a check the other nodes measured has
no result on it (skipped, aborted, missing) or a value that is not a measurement (NaN, inf, 0).
A multi-node check that failed drains the nodes its pairs show slow (a node pair matrix: each
node's pairs against the pairs without it, near-linear), else every node it ran on.

Writes DIR/drain.csv (DRAIN_FIELDS), DIR/pass.csv (PASS_FIELDS), DIR/suspects.csv
(SUSPECT_FIELDS) and DIR/noise.csv (NOISE_FIELDS): every node in exactly one of drain.csv and
pass.csv.  It prints the ``scontrol update nodename=... state=drain reason=...`` lines for a person
to run (never runs them) and exits EXIT_REPORT_FAIL (6) when a node is to be drained or the session
measured nothing, EXIT_ACCEPTANCE_RETEST (11) when nothing is to be drained but a suspect is to be
retested (the verdict is not final), EXIT_ACCEPTANCE_NOT_JUDGED (12) when neither, but a node
could not be judged (pass.csv's verdict "not judged": a variable of it the fleet rule cannot judge,
too few nodes and no class file, or on which it cannot see a node NOT_JUDGED_LOSS slow; such a
node is never listed as a pass), EXIT_BAD_INPUT (2) for an unreadable session or a bad option
(one line), else 0.
An earlier drain.csv in DIR is not overwritten without ``--force``.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import shlex
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..constants import (
    EXIT_ACCEPTANCE_NOT_JUDGED,
    EXIT_ACCEPTANCE_RETEST,
    EXIT_BAD_INPUT,
    EXIT_OK,
    EXIT_REPORT_FAIL,
)
from ..contract import ERROR_PREFIX
from . import fleetrule, noisemodel as nm

#: the fewest repeats per node whose flag is final (fewer: a suspect, to retest)
MIN_FINAL = 4
#: false suspects per healthy node (family-wise over its variables) of the screening of nodes with
#: fewer than MIN_FINAL repeats (bench/results/2026-12-03-cpu-2core/40-suspect-screening)
SUSPECT_ALPHA = 1e-2
#: the repeats a suspect's retest asks for
RETEST_REPEATS = 5
#: the smallest loss (a fraction of performance) that drains a node, whatever its z: a variable
#: spread 0.1 % would otherwise drain a node 0.5 % slow, which no site would act on
MIN_LOSS = 0.01
#: the loss every variable should be judged to see (a fraction): the issue's 3.5 %
TARGET_LOSS = 0.035
#: a node's variable the fleet rule cannot judge, or cannot see this loss on: "not judged"
NOT_JUDGED_LOSS = nm.BLIND_LOSS
#: a node pair matrix's pair is slow where it is this much worse than the other pairs' median ...
PAIR_MIN_GAP = 0.10
#: ... and its robust z (median and MAD of the logarithms) above this
PAIR_MAX_Z = 3.5
#: pairs of a class above which the other pairs' median and MAD are taken over all its pairs (a
#: node's own are 2 / N of them): linear in the pairs
PAIR_EXACT_MAX = 4000
Z_SCALE = 0.6745  # MAD -> standard deviation of a normal distribution (1 / 1.4826)
DRAIN_FIELDS = ("node", "check", "partition", "variable", "value", "unit", "centre", "loss", "z", "bound",
                "within", "between", "k", "detectable_loss", "reason")
PASS_FIELDS = ("node", "verdict", "checks", "variables", "k", "sessions", "note")
SUSPECT_FIELDS = ("node", "check", "partition", "variable", "loss", "z", "bound", "k", "retest")
NOISE_FIELDS = ("check", "partition", "variable", "unit", "nodes", "k", "within", "within_source", "between",
                "between_source", "detectable_loss", "target_loss", "verdict")
#: a stored session's uuid (a source that is no file)
_UUID = re.compile(r"^[0-9a-fA-F-]{8,}$")


class SessionError(Exception):
    """The sessions cannot be read, or an option is bad (exit 2)."""


# -- reading the sessions ------------------------------------------------------------------------

def read_sessions(sources: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(cases, perf) of the sessions (report files or stored sessions' uuids) through the report's
    reader (gpucomm.analysis.report.inputs): one row per test case run, one per perf value."""
    from .report.inputs import Inputs, database_label, load, load_storage
    files = [s for s in sources if os.path.exists(s)]
    for s in sources:
        if not os.path.exists(s) and not _UUID.match(s):
            raise SessionError(f"{s}: no such file, nor a stored session's uuid")
    data = load(files) if files else Inputs()
    for s in sources:
        if s not in files:
            load_storage(data, s)
            _, kind, note = data.files[-1]
            if kind != "database" or note.startswith("0 "):
                raise SessionError(f"{s}: no such file, nor a stored session in {database_label()}"
                                   + (f" ({note})" if kind != "database" else ""))
    for path, kind, note in data.files:
        if kind not in ("report", "database"):
            raise SessionError(f"{path}: not a ReFrame run report ({note})")
        if note.startswith("0 ") or note == "0 sessions":
            raise SessionError(f"{path}: {note}: a ReFrame session without test cases")
    if not files and not any(k == "database" for _, k, _ in data.files):
        raise SessionError(f"{', '.join(sources)}: no stored session" + (f" ({data.problems[0]})"
                                                                          if data.problems else ""))
    _, cases, perf = data.frames()
    if cases.empty:
        raise SessionError(f"{', '.join(sources)}: no test cases")
    systems = cases.groupby("source")["system"].agg(lambda s: ",".join(sorted(set(map(str, s)))))
    if systems.nunique() > 1:
        said = "; ".join(f"{src}: {sys_}" for src, sys_ in systems.items())
        raise SessionError(f"sessions of different systems given together ({said}): give one system's")
    return cases, perf


def case_nodes(row: pd.Series) -> list[str]:
    """The nodes of a test case row: its one node, else Slurm's node list."""
    if isinstance(row["node"], str) and row["node"]:
        return [row["node"]]
    return [n for n in str(row["nodes"] or "").split(",") if n and n not in ("?", "None", "nan")]


def partition(row: pd.Series) -> str:
    return f"{row['system']}:{row['partition']}"


# -- the verdict ---------------------------------------------------------------------------------

@dataclass
class Verdict:
    drain: list = field(default_factory=list)
    passed: list = field(default_factory=list)
    suspects: list = field(default_factory=list)
    noise: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    nothing: bool = False
    #: node -> [(check, variable, what the fleet can see of it)] where the fleet rule could not judge it
    unjudged: dict = field(default_factory=dict)


def load_class(path: str) -> dict:
    """A class file (``gpucomm tolerances --fleet SESSION --class FILE``): its partitions and
    {(check, partition, variable): ClassNoise}."""
    try:
        with open(path) as fp:
            doc = json.load(fp)
        out = {}
        for name, v in doc["variables"].items():
            check, part, var = name.split("|")
            out[(check, part, var)] = fleetrule.ClassNoise(float(v["centre"]), float(v["within"]),
                                                           float(v["within_df"]), float(v["between"]),
                                                           float(v["between_df"]))
        return {"partitions": set(doc["partitions"]), "variables": out, "path": path}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SessionError(f"{path}: not a gpucomm class file ({type(exc).__name__}: {exc})") from None


def _num(v: float) -> float | str:
    return "" if v is None or (isinstance(v, float) and not math.isfinite(v)) else float(v)


def screening(arr: np.ndarray, m: np.ndarray, res: dict, suspect_alpha: float, min_loss: float,
              cls: fleetrule.ClassNoise | None) -> tuple[np.ndarray, dict]:
    """(few, screen): the nodes of one variable with fewer than MIN_FINAL repeats, and the fleet
    rule at the screening bound of ``suspect_alpha`` they are judged by (``res`` where there are none)."""
    few = np.isfinite(res["value"]) & (res["k"] < MIN_FINAL)
    return few, fleetrule.judge(arr, m, suspect_alpha, min_loss, cls) if few.any() else res


def screened(res: dict, few: np.ndarray, screen: dict, key: tuple, unit: str, nodes: list) -> list[tuple]:
    """The flags of one variable: (node, key, unit, judged, index) of its nodes flagged at the final
    bound (``res``) with MIN_FINAL or more repeats, and of those with fewer (``few``) flagged at the
    screening bound (``screen``)."""
    return ([(nodes[i], key, unit, res, i) for i in np.nonzero(res["flag"] & ~few)[0]] +
            [(nodes[i], key, unit, screen, i) for i in np.nonzero(screen["flag"] & few)[0]])


def unjudged(res: dict, few: np.ndarray, screen: dict) -> list[tuple[int, float]]:
    """(node index, detectable loss) of one variable's nodes the rule that judges them (the final
    bound, or the screening one for ``few``) cannot judge, or sees no loss below NOT_JUDGED_LOSS of
    (NaN where it cannot judge at all)."""
    out = []
    for i in np.nonzero(np.isfinite(res["value"]))[0]:
        applied = screen if few[i] else res
        det = float(applied["detectable"][i])
        if not applied["judgeable"][i]:
            out.append((int(i), float("nan")))
        elif not det < NOT_JUDGED_LOSS:
            out.append((int(i), det))
    return out


@dataclass
class _Tally:
    """What evaluate gathers on its way: the verdict, each node's drain rows and what it was judged on."""
    out: Verdict
    reasons: defaultdict[str, list[dict]] = field(default_factory=lambda: defaultdict(list))  # node -> drain rows
    judged: defaultdict[str, list[Any]] = field(  # node -> [checks, variables, ks]
        default_factory=lambda: defaultdict(lambda: [set(), 0, []]))

    def drain(self, node: str, check: str, part: str, reason: str, **more: Any) -> None:
        """Add a drain row of ``node``."""
        self.reasons[node].append(dict(node=node, check=check, partition=part, reason=reason, **more))


def evaluate(cases: pd.DataFrame, perf: pd.DataFrame, alpha: float = nm.ALPHA, min_loss: float = MIN_LOSS,
             target: float = TARGET_LOSS, variables: re.Pattern | None = None,
             cls: dict | None = None, suspect_alpha: float = SUSPECT_ALPHA) -> Verdict:
    """The verdict of the pooled sessions' test cases (the module's docstring)."""
    tally = _Tally(Verdict())
    cases = cases.assign(part=cases["system"].astype(str) + ":" + cases["partition"].astype(str))
    perf = perf.assign(part=perf["system"].astype(str) + ":" + perf["partition"].astype(str))
    single = cases[cases["node"].notna()]
    multi = cases[cases["node"].isna()]
    if cls is not None:
        _check_class_partitions(cases, cls)
    node_part = _node_partitions(cases)
    # 1. the checks of one node: a failure, no result, a missing case
    _judge_node_cases(tally, single, node_part)
    # 2. the fleet rule, per variable
    vals = _fleet_values(perf, variables)
    if len(vals):
        _judge_fleet(tally, vals, single, alpha, min_loss, target, cls, suspect_alpha)
    # 3. the checks across nodes
    _judge_across_nodes(tally, multi, perf, variables)
    # 4. the lists
    suspects = _list_drains_and_suspects(tally, cases)
    if not len(vals) and not len(multi[multi["result"].isin(["pass", "fail"])]):
        _nothing_measured(tally, node_part)
    _list_passes(tally, node_part, _node_sessions(single), suspects)
    return tally.out


def _check_class_partitions(cases: pd.DataFrame, cls: dict) -> None:
    """SessionError where the class file is of none of the sessions' partitions."""
    other = set(cases["part"]) - cls["partitions"]
    if other and not set(cases["part"]) & cls["partitions"]:
        raise SessionError(f"{cls['path']}: a class file of {', '.join(sorted(cls['partitions']))}, "
                           f"not of {', '.join(sorted(other))}")


def _node_partitions(cases: pd.DataFrame) -> defaultdict[str, set[str]]:
    """{node: its partitions} of every node a test case ran on."""
    node_part: defaultdict[str, set[str]] = defaultdict(set)
    for row in cases.itertuples():
        for n in ([row.node] if isinstance(row.node, str) else
                  [x for x in str(row.nodes or "").split(",") if x and x not in ("?", "None", "nan")]):
            node_part[n].add(row.part)
    return node_part


def _node_sessions(single: pd.DataFrame) -> defaultdict[str, set[str]]:
    """{node: the sessions (or sources) of its one-node test cases}."""
    sessions: defaultdict[str, set[str]] = defaultdict(set)
    for n, s in zip(single["node"], single["session"].fillna(single["source"])):
        sessions[n].add(s)
    return sessions


def _judge_node_cases(tally: _Tally, single: pd.DataFrame, node_part: dict[str, set[str]]) -> None:
    """Step 1: drain a node a one-node check failed on or has no result on; note a check skipped on all."""
    measured = single[single["result"].isin(["pass", "fail"])]
    expected = measured.groupby("part")["test"].agg(lambda s: set(s)).to_dict()
    _drain_failed_cases(tally, single, expected)
    skipped_all = set(single.loc[single["result"] == "skip", "test"]) - set(measured["test"])
    for test in sorted(skipped_all):
        why = single.loc[(single["test"] == test), "fail_reason"].dropna().astype(str)
        tally.out.notes.append(f"{test} skipped on every node: not judged"
                               + (f" ({why.iloc[0].splitlines()[0]})" if len(why) else ""))
    have = single.groupby(["node", "part"])["test"].agg(lambda s: set(s)).to_dict()
    for node, parts in node_part.items():
        for part in parts:
            for test in sorted(expected.get(part, set()) - have.get((node, part), set())):
                tally.drain(node, test, part, f"no result for {test} (no test case of it on this node)")


def _drain_failed_cases(tally: _Tally, single: pd.DataFrame, expected: dict[str, set[str]]) -> None:
    """Drain the nodes of the one-node test cases without a result, or failed outside their references."""
    odd = single[~single["result"].isin(["pass", "fail"]) |
                 ((single["result"] == "fail") & (single["fail_phase"].astype(str) != "performance"))]
    runs = single.groupby(["node", "part", "test"]).size().to_dict()
    for (node, part, test), rows in odd.groupby(["node", "part", "test"]):
        bad = rows[~rows["result"].isin(["pass", "fail"])]
        if len(bad) and test in expected.get(part, set()):
            why = str(bad["fail_reason"].dropna().iloc[0]).splitlines()[0] if bad["fail_reason"].notna().any() \
                else ""
            tally.drain(node, test, part, f"no result for {test} ({bad['result'].iloc[0]}"
                        f"{': ' + why if why else ''}; {len(bad)} of {runs[(node, part, test)]} runs)")
        failed = rows[rows["result"] == "fail"]
        if len(failed):
            lines = str(failed["fail_reason"].fillna("no reason given").iloc[0]).strip().splitlines() or [""]
            tally.drain(node, test, part, f"check failed ({failed['fail_phase'].iloc[0] or 'failed'}: {lines[0]})")


def _fleet_values(perf: pd.DataFrame, variables: re.Pattern | None) -> pd.DataFrame:
    """The per-node perf values the fleet rule judges (those ``variables`` matches; none: SessionError)."""
    vals = perf[perf["node"].notna() & perf["result"].isin(["pass", "fail"])]
    if variables is not None:
        names = vals["var"].astype(str)
        vals = vals[names.map(lambda v: bool(variables.search(v)))]
        if vals.empty and len(perf):
            raise SessionError(f"--variables {variables.pattern!r} matches no perf variable of the sessions")
    return vals


def _judge_fleet(tally: _Tally, vals: pd.DataFrame, single: pd.DataFrame, alpha: float, min_loss: float,
                 target: float, cls: dict | None, suspect_alpha: float) -> None:
    """Step 2: the fleet rule on every variable: its noise row and notes, its flagged nodes drained or suspects."""
    nodes = sorted(vals["node"].unique())
    arrays = _variable_arrays(tally, vals, single, nodes)
    m = np.zeros(len(nodes), dtype=int)
    for arr, _ in arrays.values():
        m += np.isfinite(arr).any(axis=1)
    mm = np.clip(m, 1, None)
    flags: list[tuple] = []
    few_nodes: list[str] = []
    one_repeat: list[str] = []
    for key, (arr, unit) in arrays.items():
        c = (cls or {}).get("variables", {}).get(key) if cls else None
        res = fleetrule.judge(arr, mm, alpha, min_loss, c)
        has = np.isfinite(res["value"])
        _count_judged(tally, key, res, has, nodes)
        tally.out.noise.append(noise_row(key, unit, res, has, c, target,
                                         int(np.median(mm[has])) if has.any() else 1))
        if has.sum() and res["bimodal"] and c is None:
            _drain_bimodal(tally, key, unit, res, has, nodes)
            continue
        if has.sum() and not res["judgeable"][has].any():
            few_nodes.append(f"{key[0]} {key[2]}")
        if c is not None and bool(np.asarray(res["shifted"]).any()):
            tally.out.notes.append(f"{key[0]} {key[2]} ({key[1]}): this batch sits away from the class file's "
                                   "centre (beyond 3 standard errors): judged against its own nodes")
        few, screen = screening(arr, mm, res, max(alpha, suspect_alpha), min_loss, c)
        flags += screened(res, few, screen, key, unit, nodes)
        for i, det in unjudged(res, few, screen):
            tally.out.unjudged.setdefault(nodes[i], []).append((key[0], key[2], det))
        if has.any() and int(res["k"][has].min()) < 2:
            one_repeat.append(f"{key[0]} {key[2]}")
    _note_unjudged(tally, few_nodes, one_repeat)
    _drain_or_suspect(tally, flags)


def _variable_arrays(tally: _Tally, vals: pd.DataFrame, single: pd.DataFrame,
                     nodes: list[str]) -> dict[tuple, tuple[np.ndarray, str]]:
    """{(check, partition, variable): (node x repeat badness, unit)}; a node with a value that is no
    measurement, or with runs that gave no value, drained."""
    measured = single[single["result"].isin(["pass", "fail"])]
    ran_on = measured.groupby(["test", "part"])["node"].agg(lambda s: set(s)).to_dict()
    n_runs = measured[measured["fail_phase"].astype(str) != "sanity"].groupby(["node", "part", "test"]).size().to_dict()
    index = {n: i for i, n in enumerate(nodes)}
    arrays = {}
    for key, g in vals.groupby(["test", "part", "var"], sort=True):
        unit = str(g["unit"].iloc[0])
        value = g["value"].to_numpy(dtype=float)
        bad = ~(np.isfinite(value) & (value > 0))
        for row in g[bad].itertuples():
            tally.drain(row.node, key[0], key[1], f"{key[2]} = {row.value!r} {unit} is not a measurement",
                        variable=key[2], unit=unit)
        g = g[~bad]
        if g.empty:
            continue
        ni = g["node"].map(index).to_numpy()
        rep = g.groupby("node").cumcount().to_numpy()
        arr = np.full((len(nodes), rep.max() + 1), np.nan)
        arr[ni, rep] = nm.badness(g["value"].to_numpy(dtype=float), unit)
        arrays[key] = (arr, unit)
        # a node whose runs of the check gave fewer values of this variable than it has runs (NaN,
        # a string, nothing: the reader leaves them out)
        got = g.groupby("node").size().to_dict()
        for node in sorted(ran_on.get((key[0], key[1]), set())):
            want = n_runs.get((node, key[1], key[0]), 0)
            if got.get(node, 0) < want:
                tally.drain(node, key[0], key[1], f"{key[2]}: {want - got.get(node, 0)} of {want} runs gave no "
                            "value (NaN, not a number, or none)", variable=key[2], unit=unit)
    return arrays


def _count_judged(tally: _Tally, key: tuple, res: dict, has: np.ndarray, nodes: list[str]) -> None:
    """Count a judged variable to each node it has a value of (its check, one variable, its k)."""
    for i in np.nonzero(has)[0]:
        j = tally.judged[nodes[i]]
        j[0].add(key[0])
        j[1] += 1
        j[2].append(int(res["k"][i]))


def _drain_bimodal(tally: _Tally, key: tuple, unit: str, res: dict, has: np.ndarray, nodes: list[str]) -> None:
    """A bimodal fleet without a class file: a note, and its slower group drained."""
    slow = has & ~(res["z"] < -res["bound"])
    tally.out.notes.append(f"{key[0]} {key[2]} ({key[1]}): the fleet is bimodal ({int((has & ~slow).sum())} "
                           f"nodes faster beyond the bound): without a class file (--class) its slower group "
                           "is drained; with one, every node is judged against the class's centre")
    for i in np.nonzero(slow)[0]:
        tally.drain(nodes[i], key[0], key[1], f"{key[2]}: in the slower group of a bimodal fleet (no class "
                    "file to judge it against)", **_row_numbers(res, i, unit, key[2]))


def _note_unjudged(tally: _Tally, few_nodes: list[str], one_repeat: list[str]) -> None:
    """The notes of the variables of too few nodes, and of those with a node of one repeat."""
    if few_nodes:
        tally.out.notes.append(f"{len(few_nodes)} variable(s) with fewer than {fleetrule.MIN_NODES + 1} nodes and "
                               f"no class file (--class), e.g. {few_nodes[0]}: the fleet cannot judge them; the "
                               "verdict rests on the checks' own references there")
    if one_repeat:
        tally.out.notes.append(f"{len(one_repeat)} variable(s) with a node of one repeat, e.g. {one_repeat[0]}: "
                               "its within-node spread is unknown (k = 1), so the verdict can only find suspects "
                               f"(run with --repeat={RETEST_REPEATS})")


def _drain_or_suspect(tally: _Tally, flags: list[tuple]) -> None:
    """Each flag (screened's): its node drained with MIN_FINAL or more repeats, else a suspect."""
    for node, key, unit, res, i in flags:
        k = int(res["k"][i])
        nums = _row_numbers(res, i, unit, key[2])
        side = "above" if nm.higher_is_worse(unit) else "below"
        text = (f"{key[2]} {res['loss'][i]:.1%} slower ({side} the fleet), z {res['z'][i]:.1f} > "
                f"{res['bound'][i]:.1f}, k={k}")
        if k >= MIN_FINAL:
            tally.drain(node, key[0], key[1], text, **nums)
        else:
            tally.out.suspects.append(dict(node=node, check=key[0], partition=key[1], variable=key[2],
                                           loss=float(res["loss"][i]), z=float(res["z"][i]),
                                           bound=float(res["bound"][i]), k=k, retest=""))


def _judge_across_nodes(tally: _Tally, multi: pd.DataFrame, perf: pd.DataFrame,
                        variables: re.Pattern | None) -> None:
    """Step 3: a multi-node check drains the nodes its pairs show slow; failed without one, all its nodes."""
    for (test, part), rows in multi.groupby(["test", "part"]):
        nodes_of = sorted({n for _, r in rows.iterrows() for n in case_nodes(r)})
        pvals = perf[(perf["test"] == test) & (perf["part"] == part) & perf["node"].isna()]
        found, note = judge_pairs(pvals, nodes_of, variables)
        tally.out.notes += [f"{test} ({part}): {note}"] if note else []
        for node, reason in found.items():
            tally.drain(node, test, part, reason)
        failed = rows[~rows["result"].isin(["pass", "skip"])]
        if len(failed) and not found:
            why = str(failed["fail_reason"].fillna("no reason given").iloc[0]).strip().splitlines() or [""]
            for node in nodes_of:
                tally.drain(node, test, part, f"{test} {failed['result'].iloc[0]} across {len(nodes_of)} nodes "
                            f"({failed['fail_phase'].iloc[0] or ''}: {why[0]}); no single node identified: "
                            "retest them")


def _list_drains_and_suspects(tally: _Tally, cases: pd.DataFrame) -> defaultdict[str, list[dict]]:
    """Step 4: the drain list by node; the suspects not drained, with their retest command: {node: rows}."""
    out = tally.out
    for node in sorted(tally.reasons):
        out.drain += tally.reasons[node]
    suspects: defaultdict[str, list[dict]] = defaultdict(list)
    for s in out.suspects:
        if s["node"] not in tally.reasons:
            suspects[s["node"]].append(s)
    out.suspects = [s for n in sorted(suspects) for s in suspects[n]]
    cmdline = session_cmdlines(cases)
    for node, rows in suspects.items():
        cmd = retest_command(cmdline, node, sorted({r["check"] for r in rows}), rows[0]["partition"])
        for r in rows:
            r["retest"] = cmd
    return suspects


def _nothing_measured(tally: _Tally, node_part: dict[str, set[str]]) -> None:
    """Sessions that measured nothing: a note, and every node not drained yet drained."""
    tally.out.nothing = True
    tally.out.notes.append("the sessions measured nothing (every test case skipped or without a result)")
    for node in sorted(node_part):
        if node not in tally.reasons:
            tally.out.drain.append(dict(node=node, check="", partition=",".join(sorted(node_part[node])),
                                        reason="no result for any check (nothing was measured on it)"))
            tally.reasons[node] = []


def _list_passes(tally: _Tally, node_part: dict[str, set[str]], sessions: dict[str, set[str]],
                 suspects: dict[str, list[dict]]) -> None:
    """The pass list: every node not drained, a pass (on retest: of several sessions) or a suspect."""
    for node in sorted(node_part):
        if node in tally.reasons:
            continue
        checks, nvars, ks = tally.judged.get(node, [set(), 0, []])
        many = len(sessions.get(node, ())) > 1
        if node in suspects:
            verdict, note = "suspect", f"not final with k={min(r['k'] for r in suspects[node])}: retest (suspects.csv)"
        elif node in tally.out.unjudged:
            verdict, note = "not judged", unjudged_note(tally.out.unjudged[node])
        else:
            verdict = "pass on retest" if many else "pass"
            note = "" if nvars else "no per-node variable judged (checks across nodes only)"
        tally.out.passed.append(dict(node=node, verdict=verdict, checks=len(checks), variables=nvars,
                                     k=min(ks) if ks else "", sessions=len(sessions.get(node, ())), note=note))


def unjudged_note(rows: list[tuple]) -> str:
    """pass.csv's note of a node not judged: how many of its variables, and the first of them."""
    check, var, det = rows[0]
    why = ("too few nodes and no class file" if not math.isfinite(det) else
           f"it sees a loss of {det:.0%} at best, {NOT_JUDGED_LOSS:.0%} asked")
    return (f"the fleet rule could not judge {len(rows)} of its variables, e.g. {check} {var} ({why}): "
            "give a class file (--class), more nodes or more repeats (noise.csv)")


def _in_unit(badness: float, unit: str) -> float | str:
    """A badness back in its unit (the inverse of noisemodel.badness)."""
    if not math.isfinite(badness):
        return ""
    return math.exp(badness) if nm.higher_is_worse(unit) else math.exp(-badness)


def _row_numbers(res: dict, i: int | np.integer, unit: str, var: str) -> dict:
    return dict(variable=var, unit=unit, value=_in_unit(res["value"][i], unit),
                centre=_in_unit(res["centre"][i], unit), loss=_num(res["loss"][i]), z=_num(res["z"][i]),
                bound=_num(res["bound"][i]), within=_num(float(res["within"])), between=_num(res["between"][i]),
                k=int(res["k"][i]), detectable_loss=_num(res["detectable"][i]))


def noise_row(key: tuple, unit: str, res: dict, has: np.ndarray, cls: fleetrule.ClassNoise | None,
              target: float, m: int) -> dict:
    """One noise.csv row: the spreads a variable was judged at and what it can see."""
    w = float(res["within"])
    ws = float(res["session_within"])
    w_src = "class file" if cls is not None and cls.within >= w and cls.within > 0 else (
        "session repeats" if math.isfinite(ws) and ws >= nm.FLOOR_WITHIN else "floor")
    with np.errstate(all="ignore"), nm._quiet():
        b = float(np.nanmedian(res["between"][has])) if has.any() else float("nan")
        bs = float(np.nanmedian(res["session_between"][has])) if has.any() else float("nan")
        det = float(np.nanmedian(res["detectable"][has])) if has.any() else float("nan")
    b_src = "class file" if cls is not None and cls.between >= b and cls.between > 0 else (
        "session nodes" if math.isfinite(bs) and bs > nm.FLOOR_BETWEEN else "floor")
    k = int(np.median(res["k"][has])) if has.any() else 0
    n = int(has.sum())
    if not has.any():
        verdict = "no values"
    elif not res["judgeable"][has].any():
        verdict = "cannot judge: too few nodes and no class file"
    elif det <= target:
        verdict = f"judged: sees {target:.1%} at k={k}"
    else:
        need = fleetrule.repeats_needed(target, w, b, m, n=max(n, 2), between_known=cls is not None,
                                       k_seen=max(k, 2))
        verdict = (f"cannot judge {target:.1%} at k={k}: needs k >= {need}" if need else
                   f"cannot judge {target:.1%} at k={k}: not at any k <= 64")
    return dict(check=key[0], partition=key[1], variable=key[2], unit=unit, nodes=n, k=k, within=w,
                within_source=w_src, between=b, between_source=b_src, detectable_loss=det, target_loss=target,
                verdict=verdict)


# -- the checks across nodes ---------------------------------------------------------------------

def judge_pairs(pvals: pd.DataFrame, nodes: list[str], variables: re.Pattern | None = None
                ) -> tuple[dict[str, str], str]:
    """({node: reason} of the nodes a node pair matrix shows slow, a note): per variable base,
    each node's pairs against the other pairs (median and MAD of the logarithms without that
    node's; over all pairs for a class of more than PAIR_EXACT_MAX), a pair slow where it is
    PAIR_MIN_GAP worse and PAIR_MAX_Z robust z out; a node slow where most of its pairs are (a slow
    node's partner is slow in one pair only).  The session report holds no switch classes, so every
    pair is one class (the note says so)."""
    if len(nodes) < fleetrule.MIN_NODES or pvals.empty:
        return {}, ""
    groups, units = _pair_groups(pvals, nodes, variables)
    if not groups:
        return {}, ""
    index = {n: i for i, n in enumerate(nodes)}
    found: dict[str, str] = {}
    for base, pairs in sorted(groups.items()):
        _find_slow_nodes(found, base, pairs, units[base], nodes, index)
    note = ("the session report holds no switch classes of the pairs (SLURM_TOPOLOGY_ADDR is in the run's "
            "output folder only): every pair judged as one class")
    return found, note


def _pair_groups(pvals: pd.DataFrame, nodes: list[str], variables: re.Pattern | None
                 ) -> tuple[dict[str, dict[tuple[str, str], list[float]]], dict[str, str]]:
    """({base: {(a, b): [values]}}, {base: unit}) of the pair variables (``variables`` matches) of ``pvals``."""
    known = set(nodes)
    names = "|".join(re.escape(n) for n in sorted(nodes, key=len, reverse=True))
    pattern = re.compile(rf"^(?P<base>.+)_(?P<a>{names})-(?P<b>{names})(?P<flag>_nop2p)?$")

    def split(var: str) -> tuple[str, str, str] | None:
        """(base, a, b) of a pair variable: the quick way (node names without '_'), else the regex."""
        core = var[:-6] if var.endswith("_nop2p") else var
        base, _, tail = core.rpartition("_")
        for i in (j for j, ch in enumerate(tail) if ch == "-"):
            if tail[:i] in known and tail[i + 1:] in known:
                return base, tail[:i], tail[i + 1:]
        mt = pattern.match(var)
        return (mt.group("base"), mt.group("a"), mt.group("b")) if mt else None

    groups: defaultdict[str, defaultdict[tuple[str, str], list[float]]] = defaultdict(lambda: defaultdict(list))
    units = {}
    for var, value, unit in zip(pvals["var"].astype(str), pvals["value"], pvals["unit"]):
        got = split(var)
        if not got or (variables and not variables.search(var)):
            continue
        groups[got[0]][(got[1], got[2])].append(float(value))
        units[got[0]] = str(unit)
    return dict(groups), units


def _find_slow_nodes(found: dict[str, str], base: str, pairs: dict[tuple[str, str], list[float]], unit: str,
                     nodes: list[str], index: dict[str, int]) -> None:
    """Add to ``found`` (its first reason kept) each node most of whose pairs are slow on ``base``."""
    keys = list(pairs)
    a = np.array([index[p[0]] for p in keys])
    b = np.array([index[p[1]] for p in keys])
    bad_value = np.array([min(v) for v in pairs.values()]) <= 0
    with np.errstate(all="ignore"), nm._quiet():  # repeats of a pair: their median
        val = nm.badness([v[0] if len(v) == 1 else statistics.median(v) for v in pairs.values()], unit)
    exact = len(keys) <= PAIR_EXACT_MAX
    if not exact:  # a node's own pairs are 2 / N of them: the class's median and MAD serve
        fin = val[np.isfinite(val)]
        med_all = np.median(fin) if len(fin) else np.nan
        mad_all = np.median(np.abs(fin - med_all)) if len(fin) else np.nan
    order = np.argsort(np.concatenate([a, b]), kind="stable")
    ends = np.concatenate([a, b])[order]
    starts = np.searchsorted(ends, np.arange(len(nodes) + 1))
    for n in range(len(nodes)):
        idx = order[starts[n]:starts[n + 1]] % len(keys)  # the pairs with node n
        if not len(idx):
            continue
        if exact:
            centre = _others_centre(val, idx)
            if centre is None:
                continue
            med, mad = centre
        else:
            med, mad = med_all, mad_all
        v = val[idx]
        gap = -np.expm1(-(v - med))  # the loss of each of its pairs
        z = np.where(mad > 0, Z_SCALE * (v - med) / (mad or 1), np.inf)
        slow = ((gap >= PAIR_MIN_GAP) & (z > PAIR_MAX_Z)) | bad_value[idx] | ~np.isfinite(v)
        if slow.sum() * 2 > len(idx):
            worst = int(np.argmax(np.nan_to_num(gap, nan=1.0)))
            pair = keys[int(idx[worst])]
            found.setdefault(nodes[n], f"{int(slow.sum())} of {len(idx)} pairs with it slow on {base}; "
                             f"worst {pair[0]}-{pair[1]} {np.nan_to_num(gap, nan=1.0)[worst]:.0%} slower than "
                             "the other pairs' median")


def _others_centre(val: np.ndarray, idx: np.ndarray) -> tuple[float, float] | None:
    """(median, MAD) of the finite pair values but those at ``idx``; None with fewer than 2 of them."""
    mine = np.zeros(len(val), dtype=bool)
    mine[idx] = True
    others = val[~mine]
    others = others[np.isfinite(others)]
    if len(others) < 2:
        return None
    med = np.median(others)
    return med, np.median(np.abs(others - med))


# -- retest commands -----------------------------------------------------------------------------

_DROP_WITH_VALUE = {"-n", "--name", "--repeat", "--distribute", "-J", "--job-option", "--report-file",
                    "--nodelist", "-x", "--exclude-names", "-E", "--filter-expr"}


def session_cmdlines(cases: pd.DataFrame) -> list[str]:
    """The ReFrame command lines of the sessions (from their reports, through the reader's sessions;
    here: the cases' sources' session_info)."""
    found = []
    for src in cases["source"].dropna().unique():
        try:
            with open(src) as fp:
                found.append(str(json.load(fp).get("session_info", {}).get("cmdline") or ""))
        except (OSError, ValueError, AttributeError):
            continue
    return [c for c in found if c]


def name_filter(check: str) -> str:
    """ReFrame's ``-n`` pattern of exactly one check as the report names it ("PingPongCheck
    %method=host" -> "^PingPongCheck%method=host": its own syntax for parameters, a space in the
    pattern matches nothing; "NodeStateCheck" -> "^NodeStateCheck$")."""
    name, *params = check.split()
    if not params:
        return f"^{name}$"
    return f"^{name}" + "".join(p if p.startswith("%") else f"%{p}" for p in params)


def retest_command(cmdlines: list[str], node: str, checks: list[str], part: str) -> str:
    """The exact ReFrame command that retests ``node`` on ``checks`` with RETEST_REPEATS repeats:
    the session's own command line, its selection, repeats and node options replaced."""
    words = []
    try:
        words = shlex.split(cmdlines[0]) if cmdlines else []
    except ValueError:
        words = []
    keep, skip = [], False
    for w in words[1:]:
        if skip:
            skip = False
            continue
        opt = w.split("=", 1)[0]
        if opt in _DROP_WITH_VALUE or w in ("-r", "--run"):
            skip = "=" not in w and w not in ("-r", "--run") and opt != "--distribute"
            continue
        keep.append(w)
    if not any(w.startswith("--system") for w in keep):
        keep += ["--system", part]
    if not any(w in ("-c", "--checkpath") or w.startswith("--checkpath=") for w in keep):
        keep = ["-c", "checks/"] + keep
    sel = []
    for c in checks:
        sel += ["-n", name_filter(c)]
    return shlex.join(["reframe", *keep, *sel, "--distribute=all", f"-J--nodelist={node}",
                       f"--repeat={RETEST_REPEATS}", "-r"])


# -- writing -------------------------------------------------------------------------------------

def write_csv(path: str, fields: tuple, rows: list[dict]) -> None:
    """Write ``rows`` to ``path`` through a temporary file (a full disk leaves no partial file)."""
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", newline="") as fp:
            w = csv.DictWriter(fp, fieldnames=fields, extrasaction="ignore")
            w.writeheader()
            for row in rows:
                w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def scontrol_lines(drain: list[dict]) -> list[str]:
    """One ``scontrol update`` line per node to drain (for a person to run): the node name in
    single quotes, the reason in double quotes without the characters a shell would expand."""
    by_node = defaultdict(list)
    for row in drain:
        by_node[row["node"]].append(row)
    lines = []
    for node, rows in sorted(by_node.items()):
        first = rows[0]
        more = f" (+{len(rows) - 1} more)" if len(rows) > 1 else ""
        reason = re.sub(r"[\"'\\$`]", "", f"gpucomm acceptance: {first['check']}: {first['reason']}{more}")
        quoted = "'" + node.replace("'", "'\\''") + "'"  # a shell word, whatever the name holds
        lines.append(f'scontrol update nodename={quoted} state=drain reason="{reason}"')
    return lines


def _fraction(text: str) -> float:
    v = float(text)
    if not (0 <= v < 1):
        raise ValueError
    return v


def _alpha(text: str) -> float:
    v = float(text)
    if not (0 < v < 1):
        raise ValueError
    return v


def _regex(text: str) -> re.Pattern:
    try:
        return re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"not a regular expression ({exc})") from None


class _Parser(argparse.ArgumentParser):
    """argparse, its errors in one line (no usage block)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def _parser() -> _Parser:
    """The command line's parser."""
    ap = _Parser(prog="gpucomm acceptance", description=(__doc__ or "").splitlines()[0])
    ap.add_argument("sessions", nargs="+", metavar="SESSION",
                    help="ReFrame run reports (JSON) or stored sessions' uuids: their repeats are pooled")
    ap.add_argument("--out", default=".", help="folder for drain.csv, pass.csv, suspects.csv, noise.csv")
    ap.add_argument("--force", action="store_true", help="overwrite an earlier drain.csv in --out")
    ap.add_argument("--class", dest="cls", metavar="CLASS.json",
                    help="the node class's noise numbers (gpucomm tolerances --fleet SESSION --class FILE)")
    ap.add_argument("--alpha", type=_alpha, default=nm.ALPHA,
                    help=f"false drains per healthy node over all its variables (default {nm.ALPHA})")
    ap.add_argument("--suspect-alpha", type=_alpha, default=SUSPECT_ALPHA,
                    help=f"false suspects per healthy node measured fewer than {MIN_FINAL} times: the screening "
                    f"whose suspects are retested (default {SUSPECT_ALPHA})")
    ap.add_argument("--min-loss", "--min-gap", dest="min_loss", type=_fraction, default=MIN_LOSS,
                    help=f"smallest loss (fraction of performance) that drains a node (default {MIN_LOSS})")
    ap.add_argument("--target-loss", type=_fraction, default=TARGET_LOSS,
                    help=f"the loss each variable should be judged to see (default {TARGET_LOSS}): noise.csv")
    ap.add_argument("--variables", metavar="REGEX", type=_regex,
                    help="judge only the perf variables matching REGEX (e.g. goodput: bandwidths only)")
    return ap


def main(argv: list[str] | None = None) -> int:
    """The command (the module's docstring): its exit status."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return EXIT_BAD_INPUT if exc.code else EXIT_OK
    drain_path = os.path.join(args.out, "drain.csv")
    try:
        if os.path.exists(drain_path) and not args.force:
            raise SessionError(f"{drain_path} exists (an earlier verdict): give another --out, or --force")
        cls = load_class(args.cls) if args.cls else None
        cases, perf = read_sessions(args.sessions)
        verdict = evaluate(cases, perf, args.alpha, args.min_loss, args.target_loss, args.variables, cls,
                           args.suspect_alpha)
    except SessionError as exc:
        print(f"{ERROR_PREFIX} {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        os.makedirs(args.out, exist_ok=True)
        write_csv(os.path.join(args.out, "noise.csv"), NOISE_FIELDS, verdict.noise)
        write_csv(os.path.join(args.out, "suspects.csv"), SUSPECT_FIELDS, verdict.suspects)
        write_csv(os.path.join(args.out, "pass.csv"), PASS_FIELDS, verdict.passed)
        write_csv(drain_path, DRAIN_FIELDS, verdict.drain)
    except OSError as exc:
        print(f"{ERROR_PREFIX} cannot write the verdict to {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    _print_verdict(verdict, args.out)
    if verdict.drain or verdict.nothing:
        return EXIT_REPORT_FAIL
    if verdict.suspects:
        return EXIT_ACCEPTANCE_RETEST
    return EXIT_ACCEPTANCE_NOT_JUDGED if not_judged(verdict) else EXIT_OK


def not_judged(verdict: Verdict) -> list[str]:
    """The nodes of pass.csv the verdict could not judge (verdict "not judged")."""
    return [r["node"] for r in verdict.passed if r["verdict"] == "not judged"]


def _print_verdict(verdict: Verdict, out: str) -> None:
    """The verdict in words on stdout: notes, noise, the counts, each drain and suspect, the scontrol lines."""
    for note in verdict.notes:
        print(f"note: {note}")
    for row in verdict.noise:
        if row["verdict"].startswith("cannot"):
            print(f"noise: {row['check']} {row['variable']}: {row['verdict']} (sees {row['detectable_loss']:.1%})")
    nodes = {r["node"] for r in verdict.drain}
    sus = {r["node"] for r in verdict.suspects}
    unseen = not_judged(verdict)
    print(f"{len(verdict.passed) - len(sus) - len(unseen)} node(s) pass, {len(unseen)} not judged, {len(sus)} "
          f"suspect(s) to retest, {len(nodes)} to drain (in {out}: drain.csv, pass.csv, suspects.csv, noise.csv)")
    for row in verdict.passed:
        if row["verdict"] == "not judged":
            print(f"  not judged {row['node']}: {row['note']}")
    for row in verdict.drain:
        print(f"  {row['node']}: {row['check']} {row['reason']}")
    for row in verdict.suspects:
        print(f"  suspect {row['node']}: {row['check']} {row['variable']} {row['loss']:.1%} slower, "
              f"z {row['z']:.1f} at k={row['k']}; retest: {row['retest']}")
    for line in scontrol_lines(verdict.drain):
        print(line)


if __name__ == "__main__":
    sys.exit(main())
