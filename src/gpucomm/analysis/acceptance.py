"""Acceptance of a batch of nodes against the fleet: ReFrame sessions in (the per-node checks run
with ``--distribute``, best with ``--repeat=k``; the node pair matrix across the nodes), a drain
list, a pass list, a suspect list and the noise it was judged at out.

    gpucomm acceptance SESSION [SESSION...] [--out DIR] [--force] [--class CLASS.json]
                       [--alpha 1e-3] [--suspect-alpha 0.01] [--min-loss [KIND=]FRACTION ...]
                       [--target-loss 0.035] [--variables REGEX]

SESSION: a ReFrame JSON run report (``--report-file``, config/results.py's per-session report), or
the uuid of a session in ReFrame's results storage.  Several sessions are pooled: their repeats of
each (check, variable, node) are one sample (a retest session of some nodes added later, too).

Rule (gpucomm.analysis.fleetrule, on the statistics core gpucomm.analysis.statcore;
docs/statistics.md): per check and perf variable, a node's value is the skipped mean of its
repeats' log values; it is flagged where it is beyond the bound that lets at most ``--alpha``
healthy nodes be flagged on any of their variables, at least the variable's ``--min-loss`` slower,
and the distribution-free tail of the other nodes' repeats confirms it.  A variable whose repeats
straddle two modes inside nodes is a bimodal measurement, out of the rule (said once in noise.csv
and the summary, never a node's verdict).  Besides each variable, a node's **score**: its repeats'
distances from the centres, in within spreads, averaged over its variables, judged by the same
rule (a node slower on many variables at once).  A node flagged with MIN_FINAL or more repeats
is drained; with fewer it is screened at ``--suspect-alpha`` and a flag makes it a suspect
(suspects.csv: the retest to run, in the session's own scope).  noise.csv says per variable the
spreads it was judged at, what it can see and whether it could be judged.

A node is also drained where a check failed on it (sanity, run: anything but its own performance
references, which are values the fleet rule judges; also a failure that passed on ReFrame's
retry), where a check the other nodes measured has no result on it, where a check was aborted on
every node, or a value is not a measurement (NaN, inf, 0).  A multi-node check that failed drains
the nodes its pairs show slow (a node pair matrix: each node's pairs against the pairs without it),
else every node it ran on.

Writes DIR/drain.csv (DRAIN_FIELDS), DIR/pass.csv (PASS_FIELDS), DIR/suspects.csv
(SUSPECT_FIELDS) and DIR/noise.csv (NOISE_FIELDS): every node in exactly one of drain.csv and
pass.csv.  It prints the ``scontrol update nodename=... state=drain reason=...`` lines for a person
to run (never runs them) and exits EXIT_REPORT_FAIL (6) when a node is to be drained or the session
measured nothing, EXIT_RETEST (11) when nothing is to be drained but a suspect is to be
retested, EXIT_ACCEPTANCE_NOT_JUDGED (12) when neither but a node none of whose variables could be
judged, EXIT_BAD_INPUT (2) for an unreadable session or a bad option (one line), else 0.  An
earlier drain.csv in DIR is not overwritten without ``--force``; a second verdict writing to DIR
at the same time is refused.
"""

from __future__ import annotations

import argparse
import csv
import fcntl
import json
import math
import os
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..constants import (
    EXIT_ACCEPTANCE_NOT_JUDGED,
    EXIT_BAD_INPUT,
    EXIT_OK,
    EXIT_REPORT_FAIL,
    EXIT_RETEST,
)
from ..contract import ERROR_PREFIX
from . import fleetrule, statcore as sc
from .retest import retest_command, session_cmdlines

#: the fewest repeats per node whose flag is final (fewer: a suspect, to retest)
MIN_FINAL = 4
#: false suspects per healthy node (family-wise over its variables) of the screening of nodes with
#: fewer than MIN_FINAL repeats
SUSPECT_ALPHA = 1e-2
#: the smallest loss that drains a node, per kind of variable (statcore.MIN_LOSS, --min-loss)
MIN_LOSS = sc.MIN_LOSS
#: the loss every variable should be judged to see (a fraction): noise.csv's target
TARGET_LOSS = 0.035
#: the node score's name in the lists (its check and variable)
NODE_SCORE = ("node score", "every variable at once")
#: a node score flags a node only where its median loss over its variables is at least this
NODE_SCORE_MIN_LOSS = MIN_LOSS["rate"]
#: a node pair matrix's pair is slow where it is this much worse than the other pairs' centre ...
PAIR_MIN_GAP = 0.10
#: ... and this many of their spreads beyond it
PAIR_MAX_Z = 3.5
#: pairs of a class above which the other pairs' centre and spread are taken over all its pairs
PAIR_EXACT_MAX = 4000
DRAIN_FIELDS = ("node", "check", "partition", "variable", "value", "unit", "centre", "loss", "z", "bound",
                "within", "between", "k", "detectable_loss", "reason")
PASS_FIELDS = ("node", "verdict", "checks", "variables", "of_variables", "k", "sessions", "note")
SUSPECT_FIELDS = ("node", "check", "partition", "variable", "loss", "z", "bound", "k", "retest")
NOISE_FIELDS = ("check", "partition", "variable", "unit", "nodes", "k", "within", "within_source", "between",
                "between_source", "run_se", "min_loss", "detectable_loss", "target_loss", "verdict")
#: a stored session's uuid (a source that is no file)
_UUID = re.compile(r"^[0-9a-fA-F-]{8,}$")


class SessionError(Exception):
    """The sessions cannot be read, or an option is bad (exit 2)."""


# -- reading the sessions ------------------------------------------------------------------------

def read_sessions(sources: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(cases, perf) of the sessions (report files or stored sessions' uuids) through the report's
    reader (gpucomm.analysis.inputs): one row per test case run, one per perf value."""
    from .inputs import Inputs, database_label, load, load_storage
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
    cases["pair_values"] = [data.pair_values.get((src, case)) for src, case in zip(cases["source"], cases["case"])]
    systems = cases.groupby("source")["system"].agg(lambda s: ",".join(sorted(set(map(str, s)))))
    if systems.nunique() > 1:
        said = "; ".join(f"{src}: {sys_}" for src, sys_ in systems.items())
        raise SessionError(f"sessions of different systems given together ({said}): give one system's")
    _check_node_names(cases)
    return cases, perf


def _check_node_names(cases: pd.DataFrame) -> None:
    """SessionError where a test case's ``%.nid=`` names another node than the one its job ran on."""
    for row in cases.itertuples():
        ran = [n for n in str(row.nodes or "").split(",") if n and n not in ("?", "None", "nan")]
        if isinstance(row.node, str) and len(ran) == 1 and ran[0] != row.node:
            raise SessionError(f"test case {row.case}: %.nid={row.node} but ReFrame ran it on {ran[0]} "
                               f"(job_nodelist): which node it measured is unknown ({row.source})")


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
    """What ``evaluate`` finds: the lists' rows, the notes, whether anything was measured."""
    drain: list[dict] = field(default_factory=list)
    passed: list[dict] = field(default_factory=list)
    suspects: list[dict] = field(default_factory=list)
    noise: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    nothing: bool = False


@dataclass
class Judged:
    """What a node was judged on: its checks, its variables judged of those it has values of, the
    repeats of each."""
    checks: set[str] = field(default_factory=set)
    judged: int = 0
    total: int = 0
    ks: list[int] = field(default_factory=list)


@dataclass
class Variable:
    """One variable's repeats of every node (``arr``: badness, nodes x repeats), its unit and
    direction, and each repeat's own standard error of its badness (``se``, like ``arr``: the
    session report's precision, NaN where the run declared none)."""
    arr: np.ndarray
    unit: str
    sign: int
    se: np.ndarray | None = None


kind_of = sc.kind_of


def load_class(path: str) -> dict:
    """A class file (``gpucomm tolerances --fleet SESSION --class FILE``): ``class_from_document``
    of it; SessionError where it is none."""
    try:
        with open(path) as fp:
            doc = json.load(fp)
    except (OSError, ValueError) as exc:
        raise SessionError(f"{path}: not a gpucomm class file ({type(exc).__name__}: {exc})") from None
    return class_from_document(doc, path)


def class_from_document(doc: Any, path: str) -> dict:
    """A class file's partitions and {(check, partition, variable): ClassNoise}; SessionError where
    it is none, or holds a centre or spread that is not a number."""
    try:
        out = {}
        for name, v in doc["variables"].items():
            check, part, var = name.split("|")
            centre, within, within_df, between, between_df = (
                math.inf if v[x] is None else float(v[x]) for x in ("centre", "within", "within_df", "between",
                                                                      "between_df"))
            if not all(math.isfinite(x) for x in (centre, within, between)):
                raise ValueError(f"{name}: a centre or spread that is not a number")
            out[(check, part, var)] = fleetrule.ClassNoise(
                centre, within, within_df, between, between_df, nodes=int(v.get("nodes") or 0),
                values=tuple(float(x) for x in v.get("values") or ()), pool=tuple(float(x) for x in v.get("pool") or ()))
        return {"partitions": set(doc["partitions"]), "variables": out, "path": path}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SessionError(f"{path}: not a gpucomm class file ({type(exc).__name__}: {exc})") from None


def _num(v: Any) -> float | str:
    return "" if v is None or (isinstance(v, (float, np.floating)) and not math.isfinite(v)) else float(v)


@dataclass
class _Tally:
    """What evaluate gathers on its way: the verdict, each node's drain rows and what it was judged on."""
    out: Verdict
    reasons: defaultdict[str, list[dict]] = field(default_factory=lambda: defaultdict(list))
    judged: defaultdict[str, Judged] = field(default_factory=lambda: defaultdict(Judged))

    def drain(self, node: str, check: str, part: str, reason: str, **more: Any) -> None:
        """Add a drain row of ``node``."""
        self.reasons[node].append(dict(node=node, check=check, partition=part, reason=reason, **more))


@dataclass(frozen=True)
class Options:
    """The verdict's options (the command line's)."""
    alpha: float = sc.ALPHA
    min_loss: dict[str, float] = field(default_factory=lambda: dict(MIN_LOSS))
    target: float = TARGET_LOSS
    variables: re.Pattern | None = None
    cls: dict | None = None
    suspect_alpha: float = SUSPECT_ALPHA


def evaluate(cases: pd.DataFrame, perf: pd.DataFrame, opts: Options | None = None) -> Verdict:
    """The verdict of the pooled sessions' test cases (the module's docstring)."""
    opts = opts or Options()
    tally = _Tally(Verdict())
    cases = cases.assign(part=cases["system"].astype(str) + ":" + cases["partition"].astype(str))
    perf = perf.assign(part=perf["system"].astype(str) + ":" + perf["partition"].astype(str))
    single = cases[cases["node"].notna()]
    multi = cases[cases["node"].isna()]
    if opts.cls is not None:
        _check_class_partitions(cases, opts.cls)
    node_part = _node_partitions(cases)
    # 1. the checks of one node: a failure, no result, a missing case
    _judge_node_cases(tally, single, node_part)
    # 2. the fleet rule, per variable, and each node's score
    vals = _fleet_values(perf, opts.variables)
    if len(vals):
        _judge_fleet(tally, vals, single, opts)
    # 3. the checks across nodes
    _judge_across_nodes(tally, multi, perf, opts.variables)
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
    """Step 1: drain a node a one-node check failed on or has no result on; a check aborted on
    every node drains them all; a check skipped on every node is said."""
    measured = single[single["result"].isin(["pass", "fail"])]
    expected = measured.groupby("part")["test"].agg(lambda s: set(s)).to_dict()
    _drain_failed_cases(tally, single, expected)
    _drain_retried(tally, single)
    unmeasured = set(single["test"]) - set(measured["test"])
    for test in sorted(unmeasured):
        rows = single[single["test"] == test]
        why = rows["fail_reason"].dropna().astype(str)
        first = f" ({why.iloc[0].splitlines()[0]})" if len(why) and why.iloc[0].strip() else ""
        if rows["result"].eq("skip").all():
            tally.out.notes.append(f"{test} skipped on every node: not judged{first}")
            continue
        for row in rows.drop_duplicates(["node", "part"]).itertuples():
            tally.drain(row.node, test, row.part, f"{test} {row.result} on every node{first}: nothing of it "
                        "was measured on any node")
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


def _drain_retried(tally: _Tally, single: pd.DataFrame) -> None:
    """Drain the nodes of test cases that failed (outside their references) and passed on ReFrame's retry."""
    if "retried" not in single:
        return
    for row in single[single["retried"].notna() & (single["retried"].astype(str) != "")].itertuples():
        tally.drain(row.node, row.test, row.part, f"failed, then passed on ReFrame's retry ({row.retried}): a "
                    "failure on a retry is never a pass")


def _fleet_values(perf: pd.DataFrame, variables: re.Pattern | None) -> pd.DataFrame:
    """The per-node perf values the fleet rule judges (those ``variables`` matches; none: SessionError)."""
    vals = perf[perf["node"].notna() & perf["result"].isin(["pass", "fail"])]
    if variables is not None:
        names = vals["var"].astype(str)
        vals = vals[names.map(lambda v: bool(variables.search(v)))]
        if vals.empty and len(perf):
            raise SessionError(f"--variables {variables.pattern!r} matches no perf variable of the sessions")
    return vals


def _judge_fleet(tally: _Tally, vals: pd.DataFrame, single: pd.DataFrame, opts: Options) -> None:
    """Step 2: the fleet rule on every variable (its noise row, its flagged nodes drained or
    suspects), then each node's score over its variables."""
    nodes = sorted(vals["node"].unique())
    arrays = _variable_arrays(tally, vals, single, nodes)
    m = np.zeros(len(nodes), dtype=int)
    for v in arrays.values():
        m += np.isfinite(v.arr).any(axis=1)
    mm = np.clip(m + 1, 1, None)  # the node score is one more try
    flags: list[tuple] = []
    judged: dict[tuple, fleetrule.Judgement] = {}
    for key, v in arrays.items():
        c = (opts.cls or {}).get("variables", {}).get(key) if opts.cls else None
        j = fleetrule.judge(v.arr, mm, opts.alpha, opts.min_loss[kind_of(v.unit, v.sign)], c, run_se=v.se)
        _count_judged(tally, key, j, nodes)
        tally.out.noise.append(noise_row(key, v, j, c, opts))
        if c is not None and j.shifted:
            tally.out.notes.append(f"{key[0]} {key[2]} ({key[1]}): this batch sits away from the class file's "
                                   "centre (beyond 3 standard errors): judged against its own nodes")
        if j.judgeable:
            judged[key] = j
            flags += [(nodes[i], *rest) for i, *rest in _flags(key, v, j, mm, opts, c)]
    flags += [(nodes[i], *rest) for i, *rest in _node_score(arrays, judged, nodes, mm, opts)]
    _note_unjudged(tally, arrays, judged)
    _drain_or_suspect(tally, flags)


def _flags(key: tuple, v: Variable, j: fleetrule.Judgement, mm: np.ndarray, opts: Options,
           c: fleetrule.ClassNoise | None) -> list[tuple]:
    """(node index, key, unit, judgement, node index) of one variable's flags: its nodes of MIN_FINAL or more
    repeats flagged at the final bound, those with fewer flagged by the screening (at
    --suspect-alpha: a suspect costs a retest, not a drain)."""
    few = j.has & (j.k < MIN_FINAL)
    out = [(i, key, v.unit, j, i) for i in np.nonzero(j.flag & ~few)[0]]
    if few.any():
        screen = fleetrule.judge(v.arr, mm, max(opts.alpha, opts.suspect_alpha),
                                 opts.min_loss[kind_of(v.unit, v.sign)], c, run_se=v.se)
        out += [(i, key, v.unit, screen, i) for i in np.nonzero(screen.flag & few)[0]]
    return out


def _variable_arrays(tally: _Tally, vals: pd.DataFrame, single: pd.DataFrame,
                     nodes: list[str]) -> dict[tuple, Variable]:
    """{(check, partition, variable): Variable}, each node's repeats in the order of their sessions
    and repeat numbers; a node with a value that is no measurement, or with runs that gave no
    value, drained; a variable whose direction is unknown said, not judged."""
    measured = single[single["result"].isin(["pass", "fail"])]
    ran_on = measured.groupby(["test", "part"])["node"].agg(lambda s: set(s)).to_dict()
    n_runs = measured[measured["fail_phase"].astype(str) != "sanity"].groupby(["node", "part", "test"]).size().to_dict()
    index = {n: i for i, n in enumerate(nodes)}
    arrays = {}
    vals = vals.assign(_s=vals["session"].fillna(vals["source"]).astype(str)).sort_values(["_s", "repeat"],
                                                                                            kind="stable")
    for key, g in vals.groupby(["test", "part", "var"], sort=True):
        unit = str(g["unit"].iloc[0])
        try:
            sign = sc.worse_sign(unit, g["lower"].iloc[0], g["upper"].iloc[0])
        except sc.UnknownDirection as exc:
            tally.out.notes.append(f"{key[0]} {key[2]} ({key[1]}): not judged: {exc}")
            continue
        value = g["value"].to_numpy(dtype=float)
        bad = ~(np.isfinite(value) & (value > 0))
        if bad.any():
            for row in g[bad].itertuples():
                tally.drain(row.node, key[0], key[1], f"{key[2]} = {row.value!r} {unit} is not a measurement",
                            variable=key[2], unit=unit)
            g = g[~bad]
        if g.empty:
            continue
        ni = g["node"].map(index).to_numpy()
        rep = g.groupby("node").cumcount().to_numpy()
        arr = np.full((len(nodes), rep.max() + 1), np.nan)
        arr[ni, rep] = sc.badness(g["value"].to_numpy(dtype=float), sign)
        se = np.full(arr.shape, np.nan)
        se[ni, rep] = pd.to_numeric(g["rel_se"], errors="coerce").to_numpy(dtype=float) if "rel_se" in g else np.nan
        arrays[key] = Variable(arr, unit, sign, se)
        got = g.groupby("node").size().to_dict()
        for node in sorted(ran_on.get((key[0], key[1]), set())):
            want = n_runs.get((node, key[1], key[0]), 0)
            if got.get(node, 0) < want:
                tally.drain(node, key[0], key[1], f"{key[2]}: {want - got.get(node, 0)} of {want} runs gave no "
                            "value (NaN, not a number, or none)", variable=key[2], unit=unit)
    return arrays


def _count_judged(tally: _Tally, key: tuple, j: fleetrule.Judgement, nodes: list[str]) -> None:
    """Count a variable to each node it has a value of: judged where the variable could be judged
    and sees a loss of less than statcore.BLIND_LOSS on the node (a node none of whose variables
    is judged is "not judged"; a variable blind on every node is said once, in noise.csv)."""
    for i in np.nonzero(j.has)[0]:
        rec = tally.judged[nodes[i]]
        rec.total += 1
        if j.judgeable and j.detectable[i] < sc.BLIND_LOSS:
            rec.judged += 1
            rec.checks.add(key[0])
            rec.ks.append(int(j.k[i]))


def _node_score(arrays: dict[tuple, Variable], judged: dict[tuple, fleetrule.Judgement], nodes: list[str],
                mm: np.ndarray, opts: Options) -> list[tuple]:
    """The node score's flags: per node and repeat, the mean over its judged variables of the
    repeat's distance from the node's centre in within spreads (each clipped at statcore.CLIP: one
    variable far out is that variable's flag), judged by the fleet rule as one more variable; a
    flag stands where the node's median loss over its variables is at least NODE_SCORE_MIN_LOSS."""
    if len(judged) < 2:
        return []
    width = max(arrays[key].arr.shape[1] for key in judged)
    total = np.zeros((len(nodes), width))
    count = np.zeros((len(nodes), width))
    losses = np.full((len(nodes), len(judged)), np.nan)
    for col, (key, j) in enumerate(judged.items()):
        a = arrays[key].arr
        u = np.clip((a - j.centre[:, None]) / j.within, -sc.CLIP, sc.CLIP)
        fin = np.isfinite(u)
        total[:, :a.shape[1]] += np.where(fin, u, 0.0)
        count[:, :a.shape[1]] += fin
        losses[:, col] = j.loss
    with sc._quiet():
        score = np.where(count > 0, total / count, np.nan)
        median_loss = np.nanmedian(losses, axis=1)
    j = fleetrule.judge(score, mm, opts.alpha, 0.0, None, loss_test=False)
    j.flag &= median_loss >= NODE_SCORE_MIN_LOSS
    j.loss = median_loss
    unit = "within spreads"
    out = [(i, NODE_SCORE, unit, j, i) for i in np.nonzero(j.flag & (j.k >= MIN_FINAL))[0]]
    few = j.has & (j.k < MIN_FINAL)
    if few.any():
        s = fleetrule.judge(score, mm, max(opts.alpha, opts.suspect_alpha), 0.0, None, loss_test=False)
        s.flag &= median_loss >= NODE_SCORE_MIN_LOSS
        s.loss = median_loss
        out += [(i, NODE_SCORE, unit, s, i) for i in np.nonzero(s.flag & few)[0]]
    return out


def _note_unjudged(tally: _Tally, arrays: dict[tuple, Variable], judged: dict[tuple, Any]) -> None:
    """One note for the variables the rule could not judge (their reasons are noise.csv's)."""
    left = [key for key in arrays if key not in judged]
    if left:
        tally.out.notes.append(f"{len(left)} of {len(arrays)} variable(s) not judged (noise.csv says why), e.g. "
                               f"{left[0][0]} {left[0][2]}: the other variables judge their nodes")


def _drain_or_suspect(tally: _Tally, flags: list[tuple]) -> None:
    """Each flag (node, key, unit, judgement, index): its node drained with MIN_FINAL or more
    repeats, else a suspect."""
    for node, key, unit, j, i in flags:
        k = int(j.k[i])
        score = key == NODE_SCORE
        nums = _row_numbers(j, i, unit, NODE_SCORE[1] if score else key[2])
        if score:
            text = (f"slower on many variables at once: median loss {j.loss[i]:.1%} over its variables, node "
                    f"score z {j.z[i]:.1f} > {j.bound[i]:.1f}, k={k}")
            part = ""
        else:
            side = "above" if sc.lower_is_better(unit) else "below"
            text = (f"{key[2]} {j.loss[i]:.1%} slower ({side} the fleet), z {j.z[i]:.1f} > "
                    f"{j.bound[i]:.1f}, k={k}")
            part = key[1]
        if k >= MIN_FINAL:
            tally.drain(node, key[0], part, text, **nums)
        else:
            tally.out.suspects.append(dict(node=node, check=key[0], partition=part, variable=nums["variable"],
                                           loss=float(j.loss[i]), z=float(j.z[i]), bound=float(j.bound[i]),
                                           k=k, retest=""))


def _judge_across_nodes(tally: _Tally, multi: pd.DataFrame, perf: pd.DataFrame,
                        variables: re.Pattern | None) -> None:
    """Step 3: a multi-node check drains the nodes its pairs show slow; failed without one, all its nodes."""
    for (test, part), rows in multi.groupby(["test", "part"]):
        nodes_of = sorted({n for _, r in rows.iterrows() for n in case_nodes(r)})
        logged = [v for v in rows["pair_values"] if isinstance(v, dict)] if "pair_values" in rows else []
        if logged:
            found, note = judge_pair_groups(*logged_pair_groups(logged, variables), nodes_of)
        else:  # a report of per-pair perf variables
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
        checks = sorted({r["check"] for r in rows if r["check"] != NODE_SCORE[0]})
        every = any(r["check"] == NODE_SCORE[0] for r in rows)
        part = next((r["partition"] for r in rows if r["partition"]), "")
        cmd = retest_command(cmdline, node, [] if every else checks, part)
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
    """The pass list: every node not drained: a pass (on retest: of several sessions), a suspect,
    or not judged (none of its variables could be judged)."""
    for node in sorted(node_part):
        if node in tally.reasons:
            continue
        rec = tally.judged.get(node, Judged())
        many = len(sessions.get(node, ())) > 1
        if node in suspects:
            verdict = "suspect"
            note = f"not final with k={min(r['k'] for r in suspects[node])}: retest (suspects.csv)"
        elif rec.total and not rec.judged:
            verdict = "not judged"
            note = (f"none of its {rec.total} variables could be judged, or see a node {sc.BLIND_LOSS:.0%} slower "
                    "(noise.csv says why): give a class file (--class), more nodes or more repeats")
        else:
            verdict = "pass on retest" if many else "pass"
            note = (f"judged on {rec.judged} of {rec.total} variables" if rec.total else
                    "no per-node variable (checks across nodes only)")
        tally.out.passed.append(dict(node=node, verdict=verdict, checks=len(rec.checks), variables=rec.judged,
                                     of_variables=rec.total, k=min(rec.ks) if rec.ks else "",
                                     sessions=len(sessions.get(node, ())), note=note))


def _row_numbers(j: fleetrule.Judgement, i: int | np.integer, unit: str, var: str) -> dict:
    sign = sc.worse_sign(unit) if unit in sc.PERF_UNIT_DIRECTION else None
    return dict(variable=var, unit=unit,
                value=_num(sc.in_unit(j.value[i], sign)) if sign else _num(j.value[i]),
                centre=_num(sc.in_unit(j.centre[i], sign)) if sign else _num(j.centre[i]),
                loss=_num(j.loss[i]), z=_num(j.z[i]), bound=_num(j.bound[i]), within=_num(j.within),
                between=_num(j.between), k=int(j.k[i]), detectable_loss=_num(j.detectable[i]))


def noise_row(key: tuple, v: Variable, j: fleetrule.Judgement, cls: fleetrule.ClassNoise | None,
              opts: Options) -> dict:
    """One noise.csv row: the spreads a variable was judged at, what it can see, whether it was judged."""
    has = j.has
    sees = j.sees()
    k = int(np.median(j.k[has])) if has.any() else 0
    known = has & np.isfinite(j.run_se) if j.run_se is not None else np.zeros(len(has), dtype=bool)
    run = float(np.median(j.run_se[known])) if j.run_se is not None and known.any() else math.nan
    w_src = ("class file" if cls is not None and j.within != j.session_within else
             "session repeats" if math.isfinite(j.session_within) and j.session_within >= sc.FLOOR else "floor")
    if not has.any():
        verdict = "no values"
    elif not j.judgeable:
        verdict = f"not judged: {j.why}"
    elif not math.isfinite(sees) or sees >= sc.BLIND_LOSS:
        verdict = (f"blind: sees a loss of {sees:.0%} at best ({sc.BLIND_LOSS:.0%} asked); only a larger one "
                   "drains" if math.isfinite(sees) else
                   "blind: too few nodes and repeats for its confirmation to see any loss")
    elif sees <= opts.target:
        verdict = f"judged: sees {opts.target:.1%} at k={k}"
    else:
        need = _repeats_needed(j, opts.target, run)
        verdict = (f"judged; cannot see {opts.target:.1%} at k={k}: needs k >= {need}" if need else
                   f"judged; cannot see {opts.target:.1%} at k={k}: not at any k <= 64")
    se = float(np.nanmedian(j.se[has])) if has.any() else math.nan
    if j.judgeable and not sees <= opts.target and run ** 2 / max(k, 1) > se ** 2 / 2:  # the larger part of se
        verdict += f" (its runs' own standard error, {run:.1%} a run, is what limits it)"
    return dict(check=key[0], partition=key[1], variable=key[2], unit=v.unit, nodes=int(has.sum()), k=k,
                within=j.within, within_source=w_src, between=j.between, between_source=j.between_source,
                run_se=run, min_loss=opts.min_loss[kind_of(v.unit, v.sign)], detectable_loss=sees, target_loss=opts.target,
                verdict=verdict)


def _repeats_needed(j: fleetrule.Judgement, target: float, run_se: float = math.nan) -> int | None:
    """The fewest repeats per node with which this variable would see ``target`` (its spreads and
    bound as judged now, each node's own part never below its runs' declared standard error
    ``run_se`` over k; a skipped mean's error falls as 1 / sqrt(k)): a planning figure."""
    has = j.has & np.isfinite(j.bound)
    if not has.any():
        return None
    at = float(np.median(j.bound[has]))
    for k in range(2, 65):
        own = (sc.location_sd(k) * j.within) ** 2
        se = math.sqrt((max(own, run_se ** 2 / k) if math.isfinite(run_se) else own) + j.between ** 2)
        if sc.detectable_loss(se, at) <= target:
            return k
    return None


# -- the checks across nodes ---------------------------------------------------------------------

def judge_pairs(pvals: pd.DataFrame, nodes: list[str], variables: re.Pattern | None = None
                ) -> tuple[dict[str, str], str]:
    """({node: reason} of the nodes a node pair matrix shows slow, a note): per variable base,
    each node's pairs against the other pairs (statcore.location and statcore.spread of their
    badness without that node's; over all pairs for a class of more than PAIR_EXACT_MAX), a pair
    slow where it is PAIR_MIN_GAP worse and PAIR_MAX_Z spreads out; a node slow where most of its
    pairs are (a slow node's partner is slow in one pair only).  The session report holds no
    switch classes, so every pair is one class (the note says so)."""
    if len(nodes) < 3 or pvals.empty:
        return {}, ""
    return judge_pair_groups(*_pair_groups(pvals, nodes, variables), nodes)


def logged_pair_groups(logged: list[dict], variables: re.Pattern | None = None
                       ) -> tuple[dict[str, dict[tuple[str, str], list[float]]], dict[str, str]]:
    """({base: {(a, b): [values]}}, {base: unit}) of node pair matrices' every pair as their test
    cases log it (contract.PAIRS_FIELD: one job of all nodes, or the jobs of its groups, and their
    repeats pooled); ``variables`` matches the pair's name as a perf variable (BASE_A-B)."""
    groups: defaultdict[str, defaultdict[tuple[str, str], list[float]]] = defaultdict(lambda: defaultdict(list))
    units: dict[str, str] = {}
    for doc in logged:
        hosts = [str(h) for h in doc.get("nodes") or ()]
        for base, entry in (doc.get("values") or {}).items():
            for i, j, value in entry.get("pairs") or ():
                a, b = hosts[int(i)], hosts[int(j)]
                if variables and not variables.search(f"{base}_{a}-{b}"):
                    continue
                groups[base][(a, b)].append(float(value) if value is not None else math.nan)
                units[base] = str(entry.get("unit"))
    return dict(groups), units


def judge_pair_groups(groups: dict[str, dict[tuple[str, str], list[float]]], units: dict[str, str],
                      nodes: list[str]) -> tuple[dict[str, str], str]:
    """judge_pairs on pairs already grouped by base ({base: {(a, b): [values]}}, {base: unit})."""
    if len(nodes) < 3 or not groups:
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
    try:
        sign = sc.worse_sign(unit)
    except sc.UnknownDirection:
        return
    val = np.asarray(sc.location(sc.pad([list(sc.badness(v, sign)) for v in pairs.values()])), dtype=float)
    centre_all = _pair_centre(val, np.zeros(len(val), dtype=bool)) if len(keys) > PAIR_EXACT_MAX else None
    order = np.argsort(np.concatenate([a, b]), kind="stable")
    ends = np.concatenate([a, b])[order]
    starts = np.searchsorted(ends, np.arange(len(nodes) + 1))
    for n in range(len(nodes)):
        idx = order[starts[n]:starts[n + 1]] % len(keys)  # the pairs with node n
        if not len(idx):
            continue
        mine = np.zeros(len(val), dtype=bool)
        mine[idx] = True
        centre = centre_all or _pair_centre(val, mine)
        if centre is None:
            continue
        loc, spread = centre
        v = val[idx]
        gap = np.asarray(sc.shift_to_loss(v - float(loc)))  # the loss of each of its pairs
        z = (v - float(loc)) / max(spread, sc.FLOOR)
        slow = ((gap >= PAIR_MIN_GAP) & (z > PAIR_MAX_Z)) | bad_value[idx] | ~np.isfinite(v)
        if slow.sum() * 2 > len(idx):
            worst = int(np.argmax(np.nan_to_num(gap, nan=1.0)))
            pair = keys[int(idx[worst])]
            found.setdefault(nodes[n], f"{int(slow.sum())} of {len(idx)} pairs with it slow on {base}; "
                             f"worst {pair[0]}-{pair[1]} {np.nan_to_num(gap, nan=1.0)[worst]:.0%} slower than "
                             "the other pairs' centre")


def _pair_centre(val: np.ndarray, mine: np.ndarray) -> tuple[float, float] | None:
    """(statcore.location, statcore.spread) of the finite pair values not ``mine``; None with
    fewer than 2 of them."""
    others = val[~mine]
    others = others[np.isfinite(others)]
    if len(others) < 2:
        return None
    return float(sc.location(others)), float(np.nan_to_num(sc.spread(others), nan=0.0))


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
        where = f"{first['check']}: " if first.get("check") else ""
        reason = re.sub(r"[\"'\\$`]", "", f"gpucomm acceptance: {where}{first['reason']}{more}")
        quoted = "'" + node.replace("'", "'\\''") + "'"  # a shell word, whatever the name holds
        lines.append(f'scontrol update nodename={quoted} state=drain reason="{reason}"')
    return lines


def _fraction(text: str) -> float:
    """A fraction in [0, 1) (argparse's type: one line naming the value where it is none)."""
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (0 <= v < 1):
        raise argparse.ArgumentTypeError(f"{text!r} is not a fraction in [0, 1)")
    return v


def _alpha(text: str) -> float:
    """A probability in (0, 1) (argparse's type)."""
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (0 < v < 1):
        raise argparse.ArgumentTypeError(f"{text!r} is not a probability in (0, 1)")
    return v


def _regex(text: str) -> re.Pattern:
    try:
        return re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"not a regular expression ({exc})") from None


def _min_loss(text: str) -> tuple[str | None, float]:
    """--min-loss's value: (kind or None for every kind, fraction)."""
    kind, eq, value = text.rpartition("=")
    if eq and kind not in MIN_LOSS:
        raise argparse.ArgumentTypeError(f"{kind!r} is no kind of variable ({', '.join(MIN_LOSS)})")
    return (kind or None), _fraction(value)


class _Parser(argparse.ArgumentParser):
    """argparse, its errors in one line (no usage block)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def _parser() -> _Parser:
    """The command line's parser."""
    ap = _Parser(prog="gpucomm acceptance",
                 description="Acceptance of a batch of nodes against the fleet: ReFrame sessions in, a drain list, a "
                 "pass list, a suspect list and the noise each variable was judged at out (docs/acceptance.md).")
    ap.add_argument("sessions", nargs="+", metavar="SESSION",
                    help="ReFrame run reports (JSON) or stored sessions' uuids: their repeats are pooled")
    ap.add_argument("--out", default=".", help="folder for drain.csv, pass.csv, suspects.csv, noise.csv")
    ap.add_argument("--force", action="store_true", help="overwrite an earlier drain.csv in --out")
    ap.add_argument("--class", dest="cls", metavar="CLASS.json",
                    help="the node class's noise numbers (gpucomm tolerances --fleet SESSION --class FILE)")
    ap.add_argument("--alpha", type=_alpha, default=sc.ALPHA,
                    help=f"false drains per healthy node over all its variables (default {sc.ALPHA})")
    ap.add_argument("--suspect-alpha", type=_alpha, default=SUSPECT_ALPHA,
                    help=f"false suspects per healthy node measured fewer than {MIN_FINAL} times: the screening "
                    f"whose suspects are retested (default {SUSPECT_ALPHA})")
    ap.add_argument("--min-loss", "--min-gap", dest="min_loss", type=_min_loss, action="append", default=[],
                    metavar="[KIND=]FRACTION",
                    help="smallest loss (fraction of performance) that drains a node, for every kind or one "
                    "(KIND: " + ", ".join(f"{k} {v:g}" for k, v in MIN_LOSS.items()) + " by default)")
    ap.add_argument("--target-loss", type=_fraction, default=TARGET_LOSS,
                    help=f"the loss each variable should be judged to see (default {TARGET_LOSS}): noise.csv")
    ap.add_argument("--variables", metavar="REGEX", type=_regex,
                    help="judge only the perf variables matching REGEX (e.g. goodput: bandwidths only)")
    return ap


def options(args: argparse.Namespace, cls: dict | None) -> Options:
    """The verdict's Options of parsed arguments."""
    min_loss = dict(MIN_LOSS)
    for kind, value in args.min_loss:
        for k in ([kind] if kind else list(min_loss)):
            min_loss[k] = value
    return Options(alpha=args.alpha, min_loss=min_loss, target=args.target_loss, variables=args.variables,
                   cls=cls, suspect_alpha=args.suspect_alpha)


class _OutLock:
    """An exclusive lock of --out's folder for the verdict's run (a second verdict there at the
    same time is refused: SessionError)."""

    def __init__(self, out: str) -> None:
        self.path = os.path.join(out, ".gpucomm-acceptance.lock")
        self.fd: int | None = None

    def __enter__(self) -> _OutLock:
        try:
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644)
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SessionError(f"another gpucomm acceptance is writing to {os.path.dirname(self.path)} now: "
                               "give another --out, or wait for it") from None
        except OSError as exc:
            raise SessionError(f"cannot write the verdict to {os.path.dirname(self.path)}: "
                               f"{exc.strerror or exc}") from None
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.fd is not None:
            try:
                os.unlink(self.path)
            except OSError:
                pass
            os.close(self.fd)


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
        with _OutLock(args.out):
            verdict = evaluate(cases, perf, options(args, cls))
            _write(verdict, args.out, drain_path)
    except SessionError as exc:
        print(f"{ERROR_PREFIX} {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    _print_verdict(verdict, args.out)
    if verdict.drain or verdict.nothing:
        return EXIT_REPORT_FAIL
    if verdict.suspects:
        return EXIT_RETEST
    return EXIT_ACCEPTANCE_NOT_JUDGED if not_judged(verdict) else EXIT_OK


def _write(verdict: Verdict, out: str, drain_path: str) -> None:
    """The four lists (SessionError where they cannot be written)."""
    try:
        write_csv(os.path.join(out, "noise.csv"), NOISE_FIELDS, verdict.noise)
        write_csv(os.path.join(out, "suspects.csv"), SUSPECT_FIELDS, verdict.suspects)
        write_csv(os.path.join(out, "pass.csv"), PASS_FIELDS, verdict.passed)
        write_csv(drain_path, DRAIN_FIELDS, verdict.drain)
    except OSError as exc:
        raise SessionError(f"cannot write the verdict to {out}: {exc.strerror or exc}") from None


def not_judged(verdict: Verdict) -> list[str]:
    """The nodes of pass.csv the verdict could not judge (verdict "not judged")."""
    return [r["node"] for r in verdict.passed if r["verdict"] == "not judged"]


def _print_verdict(verdict: Verdict, out: str) -> None:
    """The verdict in words on stdout: notes, the variables not judged or blind (once each), the
    counts, each drain and suspect, the scontrol lines."""
    for note in verdict.notes:
        print(f"note: {note}")
    for row in verdict.noise:
        if row["verdict"].startswith(("not judged", "blind", "judged;")):
            print(f"variable: {row['check']} {row['variable']}: {row['verdict']}")
    nodes = {r["node"] for r in verdict.drain}
    sus = {r["node"] for r in verdict.suspects}
    unseen = not_judged(verdict)
    judged = [r for r in verdict.passed if r["verdict"].startswith("pass")]
    share = ""
    if judged:
        m = [int(r["variables"]) for r in judged]
        total = [int(r["of_variables"]) for r in judged]
        share = f" (judged on {min(m)}-{max(m)} of {max(total)} variables)"
    print(f"{len(judged)} node(s) pass{share}, {len(unseen)} not judged, {len(sus)} suspect(s) to retest, "
          f"{len(nodes)} to drain (in {out}: drain.csv, pass.csv, suspects.csv, noise.csv)")
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
