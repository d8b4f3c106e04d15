#!/usr/bin/env python3
"""Tool against Python payload, same method, operation and size, from ReFrame reports (issue 6):
the native checks (checks/native.py: OSU, OSU's NCCL benchmarks, nccl-tests) and the payload's
health sweeps (checks/health.py), whose perf variables share their names (latency_8B,
goodput_1MiB, ...; the sweeps prefix the method).  The payload column is the median over every
report given with --payload (several healthy runs), the tool column the native report's value.

    bench/lib/side_by_side.py --native report-native.json --payload report-health-*.json [--md OUT]
"""

import argparse
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src"))

from gpucomm.analysis.inputs import load  # noqa: E402

#: (payload operation, payload method, native check, what the tool measures)
PAIRS = [
    ("pingpong", "host", "OsuCheck %bench=osu_latency %buffers=host", "osu_latency -c, host buffers"),
    ("pingpong", "gpu-aware-mpi", "OsuCheck %bench=osu_latency %buffers=device",
     "osu_latency -c -d cuda D D"),
    ("pingpong", "ccl", "OsuXcclCheck %bench=osu_xccl_latency", "osu_xccl_latency (NCCL ping-pong)"),
    ("pingpong", "ccl", "NcclTestsCheck %test=sendrecv %mode=mpi",
     "nccl-tests sendrecv, MPI mode (both ranks send at once)"),
    ("allreduce", "host", "OsuCheck %bench=osu_allreduce %buffers=host", "osu_allreduce -c -T mpi_float"),
    ("allreduce", "ccl", "NcclTestsCheck %test=all_reduce %mode=mpi", "nccl-tests all_reduce, MPI mode"),
    ("allreduce", "ccl", "NcclTestsCheck %test=all_reduce %mode=single", "nccl-tests all_reduce, -g 2"),
    ("allreduce", "ccl", "OsuXcclCheck %bench=osu_xccl_allreduce", "osu_xccl_allreduce"),
    ("alltoall", "host", "OsuCheck %bench=osu_alltoall %buffers=host", "osu_alltoall -c"),
    ("alltoall", "ccl", "NcclTestsCheck %test=alltoall %mode=mpi", "nccl-tests alltoall, MPI mode"),
    ("alltoall", "ccl", "NcclTestsCheck %test=alltoall %mode=single", "nccl-tests alltoall, -g 2"),
    ("alltoall", "ccl", "OsuXcclCheck %bench=osu_xccl_alltoall", "osu_xccl_alltoall"),
]
POINTS = ["latency_8B", "goodput_1MiB", "goodput_64MiB"]


def values(paths):
    """{(test, variable): [values]}, {same: unit} of the passing or failing cases."""
    perf = load(paths).frames()[2]
    perf = perf[perf["result"].isin(["pass", "fail"])]
    out, units = defaultdict(list), {}
    for row in perf.itertuples():
        out[(row.test, row.var)].append(row.value)
        units[(row.test, row.var)] = row.unit
    return out, units


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--native", nargs="+", required=True, help="ReFrame reports of checks/native.py")
    ap.add_argument("--payload", nargs="+", required=True, help="ReFrame reports of the health mode")
    ap.add_argument("--md", help="write the table here (default: stdout)")
    args = ap.parse_args(argv)
    native, units = values(args.native)
    payload, _ = values(args.payload)
    runs = max((len(v) for v in payload.values()), default=0)
    rows = ["| operation | method | point | payload (median of runs) | tool | tool value | payload / tool |",
            "|---|---|---|---|---|---|---|"]
    for op, method, check, what in PAIRS:
        for point in POINTS:
            tool = native.get((check, point))
            mine = payload.get((f"HealthCheck %operation={op}", f"{method}_{point}"))
            if not tool or not mine:
                continue
            unit = units[(check, point)]
            p, t = statistics.median(mine), tool[0]
            rows.append(f"| {op} | {method} | {point} | {p:.2f} {unit} ({len(mine)}) | {what} | "
                        f"{t:.2f} {unit} | {p / t:.3f} |")
    text = (f"Payload: HealthCheck perf variables, median over {runs} healthy runs; tool: one run of the "
            "native check.  For latency lower is better, for goodput higher.\n\n" + "\n".join(rows) + "\n")
    if args.md:
        with open(args.md, "w") as fp:
            fp.write(text)
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
