#!/usr/bin/env python3
"""Tolerances from repeated healthy runs (issue 9): ReFrame reports in, the spread of every perf
variable and the references it implies out, as a table and as YAML for config/references/.

    bench/tolerances.py REPORT.json... [--yaml OUT.yaml] [--md OUT.md]

Rule (one, for every variable): the reference is the median over the runs; a bandwidth may
fall to 0.95 x the slowest healthy run, a latency may rise to 1.15 x the slowest healthy run
plus 0.3 us (timer and scheduling jitter of a few-microsecond measurement).  A run is then
judged again against the proposed references: every healthy run must pass them, which the
table says per variable (worst run vs bound).
"""

import argparse
import statistics
import sys
from collections import defaultdict

BW_MARGIN = 0.95       # of the slowest healthy run
LAT_MARGIN = 1.15      # of the slowest healthy run ...
LAT_SLACK_US = 0.3     # ... plus this


def collect(paths):
    """{(check, system:partition, variable): [values]} and {same: unit} over every report, read
    by the report command's reader (gpucomm.report.inputs)."""
    from gpucomm.report.inputs import load
    perf = load(paths).frames()[2]
    perf = perf[perf["result"].isin(["pass", "fail"])]
    values, units = defaultdict(list), {}
    for row in perf.itertuples():
        k = (row.test, f"{row.system}:{row.partition}", row.var)
        values[k].append(row.value)
        units[k] = row.unit
    return values, units


def propose(vals, unit):
    """[ref, lower, upper, unit] (ReFrame's relative thresholds) from the healthy values."""
    med = statistics.median(vals)
    if unit == "us":
        bound = max(vals) * LAT_MARGIN + LAT_SLACK_US
        return [round(med, 3), None, round(bound / med - 1, 3), unit]
    bound = min(vals) * BW_MARGIN
    return [round(med, 3), round(bound / med - 1, 3), None, unit]


def passes(v, ref):
    val, lo, hi = ref[0], ref[1], ref[2]
    return (lo is None or v >= val * (1 + lo)) and (hi is None or v <= val * (1 + hi))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="+")
    ap.add_argument("--yaml", help="write the proposed references (by check, partition, variable)")
    ap.add_argument("--md", help="write the spread table (markdown)")
    args = ap.parse_args(argv)
    values, units = collect(args.reports)
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
