"""The paper's measurements as ReFrame references: config/references/<system>.yaml.

    python -m gpucomm.analysis.references            # regenerate from the shipped paper data
    python -m gpucomm.analysis.references --check    # exit 1 if the committed files are out of date

Run it from the repository root (or pass --csv and --out).  The files are ReFrame 4.10
external references, one per system, keyed by check class, indexed by ``$partition``,
``num_nodes`` (so that a multi-node run is never compared with a single-node value) and
``method``; MultiPingPongCheck also by ``placement`` and ``num_tasks_per_node`` (the pairs P),
since Fig. 7 is one placement (same switch) and one P per method:

    PingPongCheck:
      $index: [$partition, num_nodes, method]
      alps:gh200:
        1:
          ccl:
            latency_8B: [7.296, null, 0.1, us]
            goodput_1GiB: [125.42875, -0.05, null, GB/s]

What is taken from paper_reference.csv (see its paper_reference.md):

* rows: PingPongCheck = Fig. 3 (intra-node ping-pong; LUMI's are its GCD 0-1 runs),
  AllToAllCheck = Fig. 5 (+ Fig. 9 with num_nodes), AllReduceCheck = Fig. 6 (+ Fig. 10),
  MultiPingPongCheck = Fig. 7 (2 nodes, same switch; goodput = the per-node aggregate),
  AllToAllScalingCheck = Fig. 9 (2 MiB blocks), AllReduceScalingCheck = Fig. 10 (1 GiB);
  methods mapped ccl -> ccl, gpu_aware_mpi -> gpu-aware-mpi, staging -> staging,
  device_copy -> ipc-copy, host_mpi -> host.  Only the perf variables whose size the paper
  measured get a value (of ours: 8 B, 2 MiB and 1 GiB); nothing for sizes or methods it did
  not run.
* values: latency_8B = time_us_median (us); goodput_* = goodput_gbps_median / 8 (Gb/s ->
  GB/s); busbw_* = that goodput times nccl-tests' bus/goodput factor of the operation
  (gpucomm.metrics: 2(n-1)/n for all-reduce, 1 for all-to-all, n = ranks).
* tolerances, the paper's own spread at that point: goodput and busbw may fall by
  (median - p05) / median, latency may rise by median/p05 - 1 (the 95th percentile of the
  time, since time = size / goodput per iteration); each at least MIN_BANDWIDTH_TOL (5 %) or
  MIN_LATENCY_TOL (10 %), because one run's iteration spread understates run-to-run variation;
  rounded up to 3 decimals.  Faster than the paper is not a failure (the payload's plausibility
  guard bounds that side).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys
from typing import Any

import yaml

from ..constants import (
    ALLREDUCE,
    ALLTOALL,
    METHOD_OF_PAPER,
    METHODS,
    MULTI_PINGPONG,
    OPERATION_DECLS,
    PAPER_REFERENCES,
    PINGPONG,
)
from ..contract import COLLECTIVE_PERF_POINTS, LATENCY, PERF_POINTS, SCALING_PERF_POINTS
from ..metrics import busbw_GBps, busbw_is_goodput, goodput_GBps
from .paper import paper_csv

#: paper method -> our method
METHOD_OF = METHOD_OF_PAPER
#: system -> the partition the paper's nodes correspond to (config/systems/<system>.py)
PARTITION_OF = {"alps": "alps:gh200", "leonardo": "leonardo:booster", "lumi": "lumi:standard-g"}
#: check class -> (its operation, whether it runs inside a node, across nodes): the checks that
#: reproduce a figure of the paper; the operation's declaration names the figures
#: (constants.OPERATION_DECLS' ``paper``)
CHECK_PLACES = {
    "PingPongCheck": (PINGPONG, True, False),
    "AllToAllCheck": (ALLTOALL, True, True),
    "AllReduceCheck": (ALLREDUCE, True, True),
    "MultiPingPongCheck": (MULTI_PINGPONG, False, True),
    "AllToAllScalingCheck": (ALLTOALL, False, True),
    "AllReduceScalingCheck": (ALLREDUCE, False, True),
}
_PAPER = {d.name: d.paper for d in OPERATION_DECLS if d.paper}
#: check class -> (the paper's operation, single-node figure, multi-node figure or None)
FIGURES = {check: (_PAPER[op][0], _PAPER[op][1] if inside else None, _PAPER[op][2] if across else None)
           for check, (op, inside, across) in CHECK_PLACES.items()}
#: checks without a figure of the paper: PairMatrixCheck's references are per pair class
#: (gpucomm.rfm.pairmatrix), measured on the node class (local.yaml), not generated here;
#: HealthCheck's points (8 B, 1 MiB, 64 MiB) are mostly sizes the paper did not measure: its
#: references come from repeated healthy runs of the node class (gpucomm tolerances); BwCheck's
#: operation (osu_bw's window) is not one the paper measured: its references are the node class's
#: (local.yaml); NoiseCheck's are ratios of our own runs (the paper's noise runs are not in its table);
#: NodeAcceptanceCheck runs the other checks of one node in one job: its values are theirs
NO_FIGURE = ("PairMatrixCheck", "HealthCheck", "BwCheck", "NoiseCheck", "NicPathCheck", "DataPathsCheck",
             "NodeAcceptanceCheck")
#: check class -> its perf variables (gpucomm.rfm) where not its operation's usual ones
PERF_POINTS_OF = {"AllToAllScalingCheck": SCALING_PERF_POINTS,
                  "AllReduceScalingCheck": SCALING_PERF_POINTS}
#: check class -> index levels after num_nodes (test variables) and the key a CSV row has there
EXTRA_LEVELS = {
    "MultiPingPongCheck": (("placement", lambda row: "same-switch"),  # Fig. 7: same switch
                           ("num_tasks_per_node", lambda row: int(row["ranks"]) // int(row["nodes"]))),
}
MIN_BANDWIDTH_TOL = 0.05
MIN_LATENCY_TOL = 0.10

DEFAULT_CSV = paper_csv()
DEFAULT_OUT = os.path.join("config", "references")


def perf_points(check: str) -> dict[str, tuple[Any, ...]]:
    """The check's perf variables: name -> (size, record field or 'latency', unit)."""
    default = PERF_POINTS if FIGURES[check][0] == PINGPONG else COLLECTIVE_PERF_POINTS
    return PERF_POINTS_OF.get(check, default)


def index_of(check: str, with_nodes: bool) -> list[str]:
    """The reference file's $index for a check."""
    extra = [name for name, _ in EXTRA_LEVELS.get(check, ())] if with_nodes else []
    return ["$partition"] + (["num_nodes"] if with_nodes else []) + extra + ["method"]


def keys_of(check: str, row: dict[str, str], with_nodes: bool) -> list[Any]:
    """A CSV row's keys along the check's index, method excepted."""
    if not with_nodes:
        return [PARTITION_OF[row["system"]]]
    return ([PARTITION_OF[row["system"]], int(row["nodes"])] +
            [key(row) for _, key in EXTRA_LEVELS.get(check, ())])


def load_rows(path: str) -> list[dict[str, str]]:
    with open(path, newline="") as fp:
        return list(csv.DictReader(fp))


def _ceil3(x):
    return math.ceil(round(x * 1000, 6)) / 1000


def reference_tuple(row: dict[str, str], field: str, unit: str) -> list[Any]:
    """[value, lower, upper, unit] for one CSV row and one of our record fields."""
    op, size, nranks = row["operation"], int(row["size_bytes"]), int(row["ranks"])
    med = float(row["goodput_gbps_median"])
    p05 = float(row["goodput_gbps_p05"])
    if field == LATENCY:
        rise = med / p05 - 1  # time = size / goodput, iteration by iteration
        return [float(row["time_us_median"]), None, _ceil3(max(rise, MIN_LATENCY_TOL)), unit]
    goodput = med / 8
    if field == "goodput_GBps":
        value = goodput
    elif field == "busbw_GBps":  # same time, nccl-tests' definition
        value = goodput * busbw_GBps(op, size, 1.0, nranks) / goodput_GBps(op, size, 1.0, nranks)
    else:
        raise ValueError(f"no paper value for record field {field!r}")
    fall = (med - p05) / med
    # 12 significant digits: exact for the CSV's values / 8, no float noise from the factor
    return [float(f"{value:.12g}"), -_ceil3(max(fall, MIN_BANDWIDTH_TOL)), None, unit]


def build(rows: list[dict[str, str]], with_nodes: bool = False) -> dict[str, dict[str, dict[str, Any]]]:
    """{system: {check: reference dict as in the YAML}} from the CSV rows."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for check, (op, fig1, fign) in FIGURES.items():
        figs = ({fig1} | ({fign} if with_nodes else set())) - {None}
        by_size: dict[Any, Any] = {}
        for name, (size, field, unit) in perf_points(check).items():
            by_size.setdefault(size, []).append((name, field, unit))
        for row in rows:
            size = int(row["size_bytes"])
            if (row["operation"] != op or row["source_figure"].split("-")[0] not in figs
                    or size not in by_size):
                continue
            method = METHOD_OF[row["method"]]
            entry = out.setdefault(row["system"], {}).setdefault(check, {})
            for k in keys_of(check, row, with_nodes):
                entry = entry.setdefault(k, {})
            entry = entry.setdefault(method, {})
            for name, field, unit in by_size[size]:
                if field == "busbw_GBps" and busbw_is_goodput(op, size, int(row["ranks"])):
                    continue  # the check reports no copy of its goodput (rfm.base.copied_points)
                entry[name] = reference_tuple(row, field, unit)
    return {system: {check: _ordered(check, refs, with_nodes) for check, refs in checks.items()}
            for system, checks in sorted(out.items())}


def _ordered(check, refs, with_nodes):
    """Stable order: index first, keys sorted, then methods as gpucomm.METHODS, perf variables
    as the check."""
    names = list(perf_points(check))
    index = index_of(check, with_nodes)

    def walk(d, level):
        if level == len(index) - 1:  # the method level
            return {m: {n: d[m][n] for n in names if n in d[m]} for m in METHODS if m in d}
        return {k: walk(d[k], level + 1) for k in sorted(d)}

    return {"$index": index, **walk(refs, 0)}


def render(system: str, refs: dict[str, dict[str, Any]], source: str) -> str:
    head = (f"# {system}: the paper's measurements as ReFrame references (GB/s, us); the checks of\n"
            "# $paper judge a run with them in the paper mode only, and show them otherwise.\n"
            f"# Generated by `python -m gpucomm.analysis.references` from {source}; do not edit:\n"
            "# change the rules in src/gpucomm/analysis/references.py and regenerate.\n")
    order = [c for c in FIGURES if c in refs]
    return head + yaml.safe_dump({PAPER_REFERENCES: order, **{c: refs[c] for c in order}},
                                 sort_keys=False, default_flow_style=None, width=100)


def generate(csv_path: str, with_nodes: bool = True) -> dict[str, str]:
    """{file name: YAML text} for every system in the CSV (``with_nodes``: indexed by
    num_nodes too, as the checks are)."""
    refs = build(load_rows(csv_path), with_nodes)
    source = os.path.basename(csv_path)
    return {f"{system}.yaml": render(system, checks, source) for system, checks in refs.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m gpucomm.analysis.references", description=__doc__.split("\n")[0])
    p.add_argument("--csv", default=DEFAULT_CSV, help=f"the paper's data (default {DEFAULT_CSV})")
    p.add_argument("--out", default=DEFAULT_OUT, help=f"where the YAML files go (default {DEFAULT_OUT})")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if a file in --out differs from what the CSV gives")
    args = p.parse_args(argv)
    if not os.path.exists(args.csv):
        p.error(f"{args.csv}: no such file (pass --csv)")
    files = generate(args.csv)
    stale = []
    for name, text in files.items():
        path = os.path.join(args.out, name)
        try:
            with open(path) as fp:
                same = fp.read() == text
        except OSError:
            same = False
        if args.check:
            if not same:
                stale.append(path)
            continue
        if not same:
            os.makedirs(args.out, exist_ok=True)
            with open(path, "w") as fp:
                fp.write(text)
        print(f"{path}: {'unchanged' if same else 'written'}")
    if stale:
        print("out of date (run python -m gpucomm.references): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
