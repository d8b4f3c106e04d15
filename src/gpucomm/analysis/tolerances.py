"""Tolerances from repeated healthy runs: ReFrame reports in, the spread of every perf
variable and the references it implies out, as a table and as YAML for config/references/.

    gpucomm tolerances REPORT.json... [--pool OLDER.json...] [--fresh-only REGEX]
                        [--pairs-pooled] [--judge LATER.json...] [--yaml OUT.yaml] [--md OUT.md]
    gpucomm tolerances --fleet SESSION... [--class CLASS.json] [--yaml OUT.yaml] [--md OUT.md]

--pool adds an earlier study's reports (another session, maybe another machine instance: a
wider view of the healthy spread); --fresh-only names the variables ("CHECK VARIABLE", a regular
expression) whose method changed since, which take their values from REPORT.json only;
--pairs-pooled pools a pair matrix's per-pair variables (uni_256MiB_0-1, uni_256MiB_1-0, ...)
into one per pair class (uni_256MiB), as PairMatrixCheck's references are given (one class
on an NVSwitch or fully linked node); --judge checks runs that took no part in the study
against the proposed references (an independent validation) and lists each run's verdict.
--fleet takes the values from healthy acceptance sessions of many nodes instead (the per-node
checks of ``--distribute=all``, best with ``--repeat``; gpucomm.analysis.acceptance): one value per
node (its repeats' median), the node class's references from the spread between nodes; the nodes
``gpucomm acceptance`` drains or suspects (a failed check, an outlier) are left out, and said.
``--class CLASS.json`` writes the noise model's numbers of the class (per variable: centre, within
and between spread with their degrees of freedom), which ``gpucomm acceptance --class`` judges by.

Rule (one, for every variable): the reference is the median over the runs; the slowest healthy
run is moved half the healthy range (median to slowest) further out; a bandwidth may fall to
0.95 x that, a latency may rise to 1.15 x that plus 0.3 us (timer and scheduling jitter of a
few-microsecond measurement).  A run is then
judged again against the proposed references: every healthy run must pass them, which the
table says per variable (worst run vs bound).

Only healthy runs shape a reference: a test case ReFrame failed (its result) and every value of a
session with a failed test case are left out, and the output says how many were
(--keep-reference-failures keeps the cases that failed only their performance references: a study
re-deriving references that were too tight).  A variable with fewer than MIN_RUNS healthy runs is
not proposed unless --force (then with a one-line warning), and a bandwidth whose bound would be
0 or below (anything passes) is never proposed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..constants import EXIT_BAD_INPUT
from . import statcore as sc

BW_MARGIN = 0.95       # of the slowest healthy run (range-extended, below)
LAT_MARGIN = 1.15      # of the slowest healthy run (range-extended) ...
LAT_SLACK_US = 0.3     # ... plus this
#: the slowest healthy run is taken this fraction of the healthy range (median to slowest)
#: further out: a few dozen runs do not sample the tail of a noisy variable (host-memory and
#: host-synchronised 1 MiB points spread 20-85 % on the reference node), while a tight one
#: (point-to-point NVLink bandwidth, 1.2-5 %) barely moves; cross-validated between two sets
#: of 10 runs on the reference node (the results README)
RANGE_EXTENSION = 0.5
#: the fewest healthy runs a reference is proposed from (without --force)
MIN_RUNS = 3


PAIR_SUFFIX = re.compile(r"_\d+-\d+$")
#: a variable: (check, system:partition, variable)
_Key = tuple[str, str, str]


def collect(paths: Sequence[str], pairs_pooled: bool = False
            ) -> tuple[dict[_Key, list[float]], dict[_Key, str]]:
    """{(check, system:partition, variable): [values]} and {same: unit} over every report, read
    by the report command's reader (gpucomm.analysis.inputs); failed runs included (collect_healthy
    leaves them out)."""
    values, units, _, _ = collect_healthy(paths, pairs_pooled, healthy_only=False)
    return values, units


def collect_healthy(paths: Sequence[str], pairs_pooled: bool = False, healthy_only: bool = True,
                    keep_reference_failures: bool = False
                    ) -> tuple[dict[_Key, list[float]], dict[_Key, str], dict[_Key, int], int]:
    """(values, units, runs, excluded): values and units as collect(); runs {key: number of
    sessions}; excluded: how many test cases were left out as unhealthy (ReFrame failed them, or
    another case of their session), or with ``keep_reference_failures`` only those that failed
    outside the performance phase (and the rest of their session)."""
    from .inputs import load
    perf = load(paths).frames()[2]
    perf = perf[perf["result"].isin(["pass", "fail"])]
    perf = perf.assign(run=perf["session"].fillna(perf["source"]) if len(perf) else [])
    excluded = 0
    if healthy_only and len(perf):
        bad = perf["result"] == "fail"
        if keep_reference_failures:
            bad &= perf["fail_phase"].astype(str) != "performance"
        drop = perf["run"].isin(set(perf.loc[bad, "run"]))
        excluded = len(perf.loc[drop, ["run", "system", "partition", "environ", "test"]].drop_duplicates())
        perf = perf[~drop]
    values, units, sessions = defaultdict(list), {}, defaultdict(set)
    for row in perf.itertuples():
        var = PAIR_SUFFIX.sub("", row.var) if pairs_pooled else row.var
        k = (row.test, f"{row.system}:{row.partition}", var)
        values[k].append(row.value)
        units[k] = row.unit
        sessions[k].add(row.run)
    return values, units, {k: len(v) for k, v in sessions.items()}, excluded


def fleet_collect(sessions: list[str], class_path: str | None = None
                  ) -> tuple[dict[_Key, list[float]], dict[_Key, str], list[str]]:
    """collect()'s tables from healthy acceptance sessions (their repeats pooled per node): one
    value per node (the median of its repeats), the nodes that ``gpucomm acceptance`` drains or
    flags (a failed check, no result, an outlier) left out; ``class_path``: also write the class
    file (``class_document``), which ``gpucomm acceptance --class`` judges against.  (values,
    units, left-out nodes), or a SessionError (also where the class file cannot be written: none
    is left half written)."""
    from .acceptance import SessionError, read_sessions
    cases, perf = read_sessions(sessions)
    doc = class_document(cases, perf, sessions)
    vals, values, units = doc.pop("_values"), {}, {}
    for (test, part, var), g in vals.groupby(["test", "part", "var"]):
        g = g[np.isfinite(g["value"]) & (g["value"] > 0)]
        if len(g):
            values[(test, part, var)] = list(g.groupby("node")["value"].median())
            units[(test, part, var)] = str(g["unit"].iloc[0])
    if class_path:
        if not doc["variables"]:
            raise SessionError("no variable of the sessions has 3 or more healthy nodes with a value: no class file "
                               "written")
        try:
            _write_json(class_path, doc)
        except OSError as exc:
            raise SessionError(f"cannot write the class file {class_path}: {exc.strerror or exc}") from None
    return values, units, doc["left_out"]


def class_document(cases: pd.DataFrame, perf: pd.DataFrame, sessions: list[str]) -> dict[str, Any]:
    """The class file of healthy acceptance sessions (read_sessions' tables): per variable the fleet
    rule's numbers of its healthy nodes (fleetrule.class_numbers: centre, spreads and degrees of
    freedom, node values and the quantiles of its repeats), the nodes ``gpucomm acceptance`` drains
    or suspects left out; "_values": the healthy nodes' perf rows (for collect's tables)."""
    from . import fleetrule
    from .acceptance import evaluate
    verdict = evaluate(cases, perf)
    out = sorted({r["node"] for r in verdict.drain} | {r["node"] for r in verdict.suspects})
    vals = perf[perf["node"].notna() & perf["result"].isin(["pass", "fail"]) & ~perf["node"].isin(out)]
    vals = vals.assign(part=vals["system"].astype(str) + ":" + vals["partition"].astype(str))
    noise = {}
    for (test, part, var), g in vals.groupby(["test", "part", "var"]):
        unit = str(g["unit"].iloc[0])
        try:
            sign = sc.worse_sign(unit, g["lower"].iloc[0], g["upper"].iloc[0])
        except sc.UnknownDirection:
            continue
        g = g[np.isfinite(g["value"].astype(float)) & (g["value"].astype(float) > 0)]
        if g.empty:
            continue
        nodes = {n: i for i, n in enumerate(sorted(g["node"].unique()))}
        rep = g.groupby("node").cumcount().to_numpy()
        arr = np.full((len(nodes), rep.max() + 1), np.nan)
        arr[g["node"].map(nodes).to_numpy(), rep] = sc.badness(g["value"].to_numpy(dtype=float), sign)
        try:
            c = fleetrule.class_numbers(arr)
        except ValueError:
            continue
        noise[f"{test}|{part}|{var}"] = dict(
            unit=unit, centre=c.centre, centre_value=float(sc.in_unit(c.centre, sign)), within=c.within,
            within_df=c.within_df if math.isfinite(c.within_df) else None, between=c.between,
            between_df=c.between_df, nodes=c.nodes, k=int(np.median(np.isfinite(arr).sum(axis=1))),
            values=[round(v, 6) for v in c.values], pool=[round(v, 6) for v in c.pool])
    return {"gpucomm_class": 2, "partitions": sorted(set(vals["part"])), "sessions": list(sessions),
            "nodes": sorted(set(vals["node"])), "left_out": out, "variables": noise, "_values": vals}


def _write_json(path: str, doc: dict[str, Any]) -> None:
    """``doc`` as JSON at ``path`` through a temporary file (a full disk or a value that is not a
    number leaves no file, and no earlier one half overwritten)."""
    text = json.dumps(doc, indent=1, allow_nan=False)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w") as fp:
            fp.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def propose(vals: list[float], unit: str) -> list[Any] | None:
    """[ref, lower, upper, unit] (ReFrame's relative thresholds) from the healthy values, or None
    (``proposal`` says why)."""
    return proposal(vals, unit)[0]


def proposal(vals: list[float], unit: str) -> tuple[list[Any] | None, str]:
    """(the reference or None, why none): from the healthy values that are measurements (finite,
    above 0: an inf or NaN shapes no reference), on the side the unit's direction bounds
    (statcore.worse_sign: a time's upper, a rate's lower); none where no value is a measurement,
    the direction is unknown, or a rate's bound would be 0 or below (anything would pass)."""
    vals = [float(v) for v in vals if math.isfinite(float(v)) and float(v) > 0]
    if not vals:
        return None, "no value is a measurement (inf, NaN or 0 only)"
    try:
        higher_worse = sc.worse_sign(unit) == sc.HIGHER_IS_WORSE
    except sc.UnknownDirection as exc:
        return None, str(exc)
    med = statistics.median(vals)
    if higher_worse:
        worst = max(vals) + RANGE_EXTENSION * (max(vals) - med)
        bound = worst * LAT_MARGIN + (LAT_SLACK_US if unit == "us" else 0.0)
        return [round(med, 3), None, round(bound / med - 1, 3), unit], ""
    worst = min(vals) - RANGE_EXTENSION * (med - min(vals))
    bound = worst * BW_MARGIN
    if not bound > 0:  # anything would pass: no reference
        return None, "its bound would be 0 or below"
    return [round(med, 3), round(bound / med - 1, 3), None, unit], ""


def passes(v: float, ref: Sequence[Any]) -> bool:
    val, lo, hi = ref[0], ref[1], ref[2]
    return (lo is None or v >= val * (1 + lo)) and (hi is None or v <= val * (1 + hi))


def check_later_runs(paths: list[str], refs: dict[str, Any], pairs_pooled: bool) -> str:
    """Each later run (one report each) against the proposed references: its failing
    variables with value and bound, as markdown lines."""
    lines = ["| run | verdict | below or above its bound |", "|---|---|---|"]
    failed = 0
    for path in paths:
        values, _ = collect([path], pairs_pooled)
        bad = []
        for (check, part, var), vals in sorted(values.items()):
            ref = refs.get(check, {}).get(part, {}).get(var)
            for v in vals if ref else []:
                if not passes(v, ref):
                    lo, hi = ref[1], ref[2]
                    bound = ref[0] * (1 + (lo if lo is not None else hi))
                    bad.append(f"{check} {var} = {v:.3f} {ref[3]} (bound {bound:.3f})")
        failed += bool(bad)
        lines.append(f"| {path} | {'FAIL' if bad else 'pass'} | {'; '.join(bad)} |")
    return f"{len(paths) - failed} of {len(paths)} later runs pass\n\n" + "\n".join(lines) + "\n"


def _parser() -> argparse.ArgumentParser:
    """The command line's parser."""
    ap = argparse.ArgumentParser(prog="gpucomm tolerances",
                                 description=" ".join((__doc__ or "").split("\n\n")[0].split()))
    ap.add_argument("reports", nargs="*")
    ap.add_argument("--fleet", metavar="SESSION", nargs="+",
                    help="healthy acceptance sessions (reports or stored uuids; repeats pooled): one value per "
                         "node, the nodes gpucomm acceptance drains left out")
    ap.add_argument("--class", dest="class_file", metavar="CLASS.json",
                    help="with --fleet: write the node class's noise numbers (gpucomm acceptance --class)")
    ap.add_argument("--pool", nargs="+", default=[], metavar="REPORT", help="earlier healthy runs, pooled in")
    ap.add_argument("--fresh-only", metavar="REGEX",
                    help="variables ('CHECK VARIABLE') that take no values from --pool")
    ap.add_argument("--pairs-pooled", action="store_true", help="one value set per pair class")
    ap.add_argument("--judge", nargs="+", default=[], metavar="REPORT",
                    help="later healthy runs, judged against the proposed references (one report per run)")
    ap.add_argument("--yaml", help="write the proposed references (by check, partition, variable)")
    ap.add_argument("--md", help="write the spread table (markdown)")
    ap.add_argument("--keep-reference-failures", action="store_true",
                    help="keep test cases that failed only their performance references (a study "
                         "re-deriving references that were too tight); other failed runs stay out")
    ap.add_argument("--force", action="store_true",
                    help=f"propose from fewer than {MIN_RUNS} healthy runs (with a warning)")
    return ap


def main(argv: list[str] | None = None) -> int:
    """The command (the module's docstring): its exit status."""
    ap = _parser()
    args = ap.parse_args(argv)
    if bool(args.reports) == bool(args.fleet):
        ap.error("give the reports of repeated runs, or --fleet SESSION")
    if args.class_file and not args.fleet:
        ap.error("--class is written from --fleet SESSION")
    if not _paths_ok(args):
        return EXIT_BAD_INPUT
    got = _healthy_values(args)
    if got is None:
        return EXIT_BAD_INPUT
    values, units, runs, excluded = got
    if args.pool:
        excluded += _pool_in(args, values, runs)
    if excluded:
        print(f"gpucomm tolerances: {excluded} test cases of failed runs left out (ReFrame failed "
              "them or another case of their session)", file=sys.stderr)
    if not _enough_runs(values, runs, args.force):
        return EXIT_BAD_INPUT
    rows, refs = _proposals(values, units)
    table = ["| check | variable | runs | median | min | max | spread | lower | upper | unit | healthy runs |",
             "|---|---|---|---|---|---|---|---|---|---|---|"] + rows
    text = "\n".join(table) + "\n"
    if args.judge:
        text += "\n" + check_later_runs(args.judge, refs, args.pairs_pooled)
    return _write(args, text, refs)


def _paths_ok(args: argparse.Namespace) -> bool:
    """Whether the files to write can be and the files to read exist (else one line on stderr)."""
    for opt, path in (("--yaml", args.yaml), ("--md", args.md), ("--class", args.class_file)):
        if path is not None and not path.strip():
            print(f"gpucomm tolerances: error: {opt} '': an empty file name: give a file to write", file=sys.stderr)
            return False
        if path and (os.path.isdir(path) or not os.path.isdir(os.path.dirname(os.path.abspath(path)))):
            what = "is a directory" if os.path.isdir(path) else "is in no existing directory"
            print(f"gpucomm tolerances: error: {opt} {path} {what}: give a file to write", file=sys.stderr)
            return False
    missing = [p for p in args.reports + args.pool + args.judge if not os.path.exists(p)]
    if missing:
        print(f"gpucomm tolerances: error: {missing[0]}: no such file or folder", file=sys.stderr)
        return False
    return True


def _healthy_values(args: argparse.Namespace) -> tuple[dict, dict, dict, int] | None:
    """(values, units, runs, excluded) of the reports, or of the --fleet sessions; None: one error line said."""
    if args.fleet:  # one value per node of a healthy fleet: the nodes are the runs
        from .acceptance import SessionError
        try:
            values, units, left_out = fleet_collect(args.fleet, args.class_file)
        except (SessionError, OSError, ValueError) as exc:
            print(f"gpucomm tolerances: error: {exc}", file=sys.stderr)
            return None
        if left_out:
            print(f"gpucomm tolerances: {len(left_out)} node(s) left out of the class (gpucomm acceptance drains "
                  f"or suspects them): {', '.join(left_out)}", file=sys.stderr)
        return values, units, {k: len(v) for k, v in values.items()}, 0
    return collect_healthy(args.reports, args.pairs_pooled, keep_reference_failures=args.keep_reference_failures)


def _pool_in(args: argparse.Namespace, values: dict, runs: dict) -> int:
    """Pool the --pool reports' values into ``values`` and ``runs`` (but --fresh-only's): their test cases left out."""
    fresh = re.compile(args.fresh_only) if args.fresh_only else None
    older, _, older_runs, older_excluded = collect_healthy(
        args.pool, args.pairs_pooled, keep_reference_failures=args.keep_reference_failures)
    for key, vals in older.items():
        if key in values and not (fresh and fresh.search(f"{key[0]} {key[2]}")):
            values[key] = values[key] + vals
            runs[key] += older_runs[key]
    return older_excluded


def _enough_runs(values: dict, runs: dict, force: bool) -> bool:
    """Whether there are values, of MIN_RUNS runs each (or --force, with a warning); else one error line said."""
    if not values:
        print("gpucomm tolerances: error: no perf values of healthy runs in the reports", file=sys.stderr)
        return False
    few = min(runs.values())
    if few < MIN_RUNS:
        if not force:
            print(f"gpucomm tolerances: error: {few} healthy run(s) for some variables, fewer than "
                  f"{MIN_RUNS}: no reference proposed (--force proposes anyway)", file=sys.stderr)
            return False
        print(f"gpucomm tolerances: warning: {few} healthy run(s) for some variables, fewer than "
              f"{MIN_RUNS}: the bands are guesses (--force)", file=sys.stderr)
    return True


def _proposals(values: dict, units: dict) -> tuple[list[str], defaultdict]:
    """(the spread table's rows, {check: {partition: {variable: reference}}}) of every variable."""
    rows: list[str] = []
    refs: defaultdict = defaultdict(lambda: defaultdict(dict))
    unbounded = []
    for (check, part, var), vals in sorted(values.items()):
        unit = units[(check, part, var)]
        ref, why = proposal(vals, unit)
        if ref is None:
            unbounded.append(f"{check} {var}")
            rows.append(f"| {check} | {var} | {len(vals)} | {statistics.median(vals):.3f} | {min(vals):.3f} | "
                        f"{max(vals):.3f} | | | | {unit} | not proposed: {why} |")
            continue
        med = statistics.median(vals)
        spread = (max(vals) - min(vals)) / med * 100 if med else 0.0
        ok = all(passes(v, ref) for v in vals)
        refs[check][part][var] = ref
        rows.append(f"| {check} | {var} | {len(vals)} | {med:.3f} | {min(vals):.3f} | {max(vals):.3f} | "
                    f"{spread:.1f}% | {ref[1] if ref[1] is not None else ''} | "
                    f"{ref[2] if ref[2] is not None else ''} | {unit} | {'all pass' if ok else 'FAIL'} |")
    if unbounded:
        print(f"gpucomm tolerances: warning: no reference proposed for {len(unbounded)} variables whose "
              f"healthy runs spread too wide to bound (lower bound 0 or below): {', '.join(unbounded)}",
              file=sys.stderr)
    return rows, refs


def _write(args: argparse.Namespace, text: str, refs: dict) -> int:
    """The table to --md (else stdout), the references to --yaml: 0, or EXIT_BAD_INPUT where one cannot be written."""
    try:
        if args.md:
            _write_file(args.md, lambda fp: fp.write(text))
        else:
            print(text)
        if args.yaml:
            import yaml
            plain = {c: {p: dict(v) for p, v in parts.items()} for c, parts in refs.items()}
            _write_file(args.yaml, lambda fp: yaml.safe_dump(plain, fp, sort_keys=False, default_flow_style=None))
    except OSError as exc:
        print(f"gpucomm tolerances: error: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0


def _write_file(path: str, write: Any) -> None:
    """``write(fp)`` into ``path``; an OSError names the path (a full disk fails in write or
    close, whose error names no file), and a file this call made is not left behind half
    written (a 0-byte file on a full disk)."""
    made = not os.path.lexists(path)
    try:
        with open(path, "w") as fp:
            write(fp)
    except OSError as exc:
        if made and os.path.isfile(path):
            os.unlink(path)
        raise OSError(exc.errno, exc.strerror, path) from None


if __name__ == "__main__":
    sys.exit(main())
