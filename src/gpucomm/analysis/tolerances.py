"""Tolerances from repeated healthy runs: ReFrame reports in, the spread of every perf
variable and the references it implies out, as a table and as YAML for config/references/.

    gpucomm tolerances REPORT.json... [--pool OLDER.json...] [--fresh-only REGEX]
                        [--pairs-pooled] [--judge LATER.json...] [--yaml OUT.yaml] [--md OUT.md]
    gpucomm tolerances --fleet SESSION [--yaml OUT.yaml] [--md OUT.md]

--pool adds an earlier study's reports (another session, maybe another machine instance: a
wider view of the healthy spread); --fresh-only names the variables ("CHECK VARIABLE", a regular
expression) whose method changed since, which take their values from REPORT.json only;
--pairs-pooled pools a pair matrix's per-pair variables (uni_256MiB_0-1, uni_256MiB_1-0, ...)
into one per pair class (uni_256MiB), as PairMatrixCheck's references are given (one class
on an NVSwitch or fully linked node); --judge checks runs that took no part in the study
against the proposed references (an independent validation) and lists each run's verdict.
--fleet takes the values from one healthy acceptance session of many nodes instead (the per-node
checks of ``--distribute=all``, gpucomm.analysis.acceptance): one value per node, the node class's
references from the spread between nodes.

Rule (one, for every variable): the reference is the median over the runs; the slowest healthy
run is moved half the healthy range (median to slowest) further out; a bandwidth may fall to
0.95 x that, a latency may rise to 1.15 x that plus 0.3 us (timer and scheduling jitter of a
few-microsecond measurement).  A run is then
judged again against the proposed references: every healthy run must pass them, which the
table says per variable (worst run vs bound).
"""

import argparse
import re
import statistics
import sys
from collections import defaultdict

BW_MARGIN = 0.95       # of the slowest healthy run (range-extended, below)
LAT_MARGIN = 1.15      # of the slowest healthy run (range-extended) ...
LAT_SLACK_US = 0.3     # ... plus this
#: the slowest healthy run is taken this fraction of the healthy range (median to slowest)
#: further out: a few dozen runs do not sample the tail of a noisy variable (host-memory and
#: host-synchronised 1 MiB points spread 20-85 % on the reference node), while a tight one
#: (point-to-point NVLink bandwidth, 1.2-5 %) barely moves; cross-validated between two sets
#: of 10 runs on the reference node (the results README)
RANGE_EXTENSION = 0.5


PAIR_SUFFIX = re.compile(r"_\d+-\d+$")


def collect(paths, pairs_pooled=False):
    """{(check, system:partition, variable): [values]} and {same: unit} over every report, read
    by the report command's reader (gpucomm.report.inputs)."""
    from .report.inputs import load
    perf = load(paths).frames()[2]
    perf = perf[perf["result"].isin(["pass", "fail"])]
    values, units = defaultdict(list), {}
    for row in perf.itertuples():
        var = PAIR_SUFFIX.sub("", row.var) if pairs_pooled else row.var
        k = (row.test, f"{row.system}:{row.partition}", var)
        values[k].append(row.value)
        units[k] = row.unit
    return values, units


def fleet_collect(session):
    """collect()'s tables from one acceptance session: the values of every node."""
    from .acceptance import SessionError, fleet_values, read_session
    try:
        values, units = fleet_values(read_session(session))
    except SessionError as exc:
        print(f"tolerances: {exc}", file=sys.stderr)
        return {}, {}
    return {k: list(v.values()) for k, v in values.items()}, units


def propose(vals, unit):
    """[ref, lower, upper, unit] (ReFrame's relative thresholds) from the healthy values."""
    med = statistics.median(vals)
    if unit == "us":
        worst = max(vals) + RANGE_EXTENSION * (max(vals) - med)
        bound = worst * LAT_MARGIN + LAT_SLACK_US
        return [round(med, 3), None, round(bound / med - 1, 3), unit]
    worst = min(vals) - RANGE_EXTENSION * (med - min(vals))
    bound = worst * BW_MARGIN
    return [round(med, 3), round(bound / med - 1, 3), None, unit]


def passes(v, ref):
    val, lo, hi = ref[0], ref[1], ref[2]
    return (lo is None or v >= val * (1 + lo)) and (hi is None or v <= val * (1 + hi))


def judge(paths, refs, pairs_pooled):
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="*")
    ap.add_argument("--fleet", metavar="SESSION",
                    help="one healthy acceptance session (report or stored uuid): one value per node")
    ap.add_argument("--pool", nargs="+", default=[], metavar="REPORT", help="earlier healthy runs, pooled in")
    ap.add_argument("--fresh-only", metavar="REGEX",
                    help="variables ('CHECK VARIABLE') that take no values from --pool")
    ap.add_argument("--pairs-pooled", action="store_true", help="one value set per pair class")
    ap.add_argument("--judge", nargs="+", default=[], metavar="REPORT",
                    help="later healthy runs, judged against the proposed references (one report per run)")
    ap.add_argument("--yaml", help="write the proposed references (by check, partition, variable)")
    ap.add_argument("--md", help="write the spread table (markdown)")
    args = ap.parse_args(argv)
    if bool(args.reports) == bool(args.fleet):
        ap.error("give the reports of repeated runs, or --fleet SESSION")
    if args.fleet:
        values, units = fleet_collect(args.fleet)
    else:
        values, units = collect(args.reports, args.pairs_pooled)
    if args.pool:
        fresh = re.compile(args.fresh_only) if args.fresh_only else None
        older, _ = collect(args.pool, args.pairs_pooled)
        for key, vals in older.items():
            if key in values and not (fresh and fresh.search(f"{key[0]} {key[2]}")):
                values[key] = values[key] + vals
    if not values:
        print("tolerances: no perf values in the reports", file=sys.stderr)
        return 2
    rows, refs = [], defaultdict(lambda: defaultdict(dict))
    for (check, part, var), vals in sorted(values.items()):
        unit = units[(check, part, var)]
        ref = propose(vals, unit)
        med = statistics.median(vals)
        spread = (max(vals) - min(vals)) / med * 100 if med else 0.0
        ok = all(passes(v, ref) for v in vals)
        refs[check][part][var] = ref
        rows.append(f"| {check} | {var} | {len(vals)} | {med:.3f} | {min(vals):.3f} | {max(vals):.3f} | "
                    f"{spread:.1f}% | {ref[1] if ref[1] is not None else ''} | "
                    f"{ref[2] if ref[2] is not None else ''} | {unit} | {'all pass' if ok else 'FAIL'} |")
    table = ["| check | variable | runs | median | min | max | spread | lower | upper | unit | healthy runs |",
             "|---|---|---|---|---|---|---|---|---|---|---|"] + rows
    text = "\n".join(table) + "\n"
    if args.judge:
        text += "\n" + judge(args.judge, refs, args.pairs_pooled)
    if args.md:
        with open(args.md, "w") as fp:
            fp.write(text)
    else:
        print(text)
    if args.yaml:
        import yaml
        plain = {c: {p: dict(v) for p, v in parts.items()} for c, parts in refs.items()}
        with open(args.yaml, "w") as fp:
            yaml.safe_dump(plain, fp, sort_keys=False, default_flow_style=None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
