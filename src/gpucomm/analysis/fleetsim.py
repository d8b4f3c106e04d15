"""Seeded synthetic fleets for the acceptance verdict: its benchmark (error rates of
gpucomm.analysis.fleetrule, the rule ``gpucomm acceptance`` applies) and its speed test (a
ReFrame run report of a large distributed session).

    python -m gpucomm.analysis.fleetsim bench [--trials 20000] [--nodes 6,64] [--k 5] [--seed 1]
                                              [--out DIR]
    python -m gpucomm.analysis.fleetsim session --nodes 1024 --k 5 --out report.json [--slow NODE]

The fleet (the issue's): 30 variables, 10 each with 0.5 %, 1 % and 5 % within-node noise (one
repeat's standard deviation of the log value); a between-node spread (0 or 0.2 %); 2 % of the
repeats transiently 5-30 % slow (uniform); ``k`` repeats per node; one node (node 0) slowed by
``loss`` on every repeat of one 1 % variable.  ``bench`` judges every trial with and without a
class file (the noise numbers of an independent healthy batch of ``CLASS_NODES`` nodes x
``CLASS_REPEATS`` repeats, a new one every ``CLASS_EVERY`` trials) and writes the detection and
false-drain rates (a CSV and a markdown table).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from . import fleetrule, statcore as sc

#: the within-node noise of the 30 variables (one repeat's standard deviation of badness)
NOISE = np.repeat([0.005, 0.01, 0.05], 10)
#: the variable that the slow node is slow on (the first 1 % one)
SLOW_VARIABLE = 10
#: the transient slowdowns of every simulator (this one's repeats, drift_synthetic's nights): this
#: fraction of the measurements, each slower by a loss drawn uniformly from SLOW_RANGE
SLOW_FRACTION = 0.02
SLOW_RANGE = (0.05, 0.30)
#: trials judged against one class file (then a new healthy batch gives a new one)
CLASS_EVERY = 500
CLASS_NODES = 64
#: repeats per node of the class batch (more than a session's: its between-node spread is a small
#: difference of two variances, known only as well as the nodes' own part is small)
CLASS_REPEATS = 10


def fleet(rng: np.random.Generator, trials: int, n: int, k: int, sd: float, between: float,
          loss: float = 0.0) -> np.ndarray:
    """Badness of one variable: ``(trials, n, k)``; node 0 is ``loss`` slow on every repeat."""
    b = rng.normal(0.0, between, (trials, n, 1)) + rng.normal(0.0, sd, (trials, n, k))
    slow = rng.random((trials, n, k)) < SLOW_FRACTION
    b += np.where(slow, sc.loss_to_shift(rng.uniform(*SLOW_RANGE, (trials, n, k))), 0.0)
    if loss:
        b[:, 0, :] += sc.loss_to_shift(loss)
    return b


def class_noise(rng: np.random.Generator, k: int, sd: float, between: float) -> fleetrule.ClassNoise:
    """The class file's numbers of one variable, from a healthy batch of ``CLASS_NODES`` nodes
    of ``CLASS_REPEATS`` (what ``gpucomm tolerances --fleet --class`` writes)."""
    return class_from(fleet(rng, 1, CLASS_NODES, CLASS_REPEATS, sd, between)[0])


def class_from(b: np.ndarray) -> fleetrule.ClassNoise:
    """A class file's numbers from one healthy batch's badness ``(n, k)``."""
    return fleetrule.class_numbers(b)


def run_trials(seed: int, trials: int, n: int, k: int, between: float, losses: list[float], with_class: bool,
               alpha: float = sc.ALPHA, min_loss: float = 0.02, chunk: int = CLASS_EVERY) -> list[dict]:
    """Detection of node 0 (each of ``losses`` on the slow variable, every repeat) and false drains
    of the healthy nodes (a node is drained where any of its 30 variables flags it) over ``trials``
    fleets of ``n`` nodes; the fleets are the same for every loss (only node 0 differs)."""
    rng = np.random.default_rng([seed, n, k, int(between * 1e4), int(with_class)])
    found = np.zeros(len(losses))
    false = 0
    det_slow = []
    done = 0
    m = len(NOISE)
    while done < trials:
        t = min(chunk, trials - done)
        flagged = np.zeros((t, n), dtype=bool)
        slow_found = np.zeros((len(losses), t), dtype=bool)
        for v, sd in enumerate(NOISE):
            cls = class_noise(rng, k, sd, between) if with_class else None
            b = fleet(rng, t, n, k, sd, between)
            res = [fleetrule.judge(b[i], m, alpha, min_loss, cls) for i in range(t)]
            flags = np.array([r.flag for r in res])
            flagged |= flags
            if v == SLOW_VARIABLE:
                det_slow.append(np.nanmedian([r.detectable[1:] for r in res]))
                for j, loss in enumerate(losses):
                    slowed = b.copy()
                    slowed[:, 0, :] += sc.loss_to_shift(loss)
                    slow_found[j] = [fleetrule.judge(slowed[i], m, alpha, min_loss, cls).flag[0] for i in range(t)]
            else:
                slow_found |= flags[None, :, 0]
        found += slow_found.sum(axis=1)
        false += int(flagged[:, 1:].sum())
        done += t
    return [dict(trials=trials, n=n, k=k, between=between, loss=loss, with_class=with_class,
                 detection=found[j] / trials, false_per_1000=1000 * false / (trials * (n - 1)),
                 false_drains=false, healthy_nodes=trials * (n - 1), detectable_1pct=float(np.median(det_slow)))
            for j, loss in enumerate(losses)]


def bench(args: argparse.Namespace) -> int:
    rows = []
    t0 = time.time()
    for n in args.nodes:
        for between in args.between:
            for with_class in (True, False) if args.with_class == "both" else (args.with_class == "yes",):
                for k in args.k:
                    t1 = time.time()
                    for r in run_trials(args.seed, args.trials, n, k, between, args.loss, with_class, args.alpha,
                                        args.min_loss):
                        r["seconds"] = round(time.time() - t1, 1)
                        rows.append(r)
                        print(" ".join(f"{key}={val:.4g}" if isinstance(val, float) else f"{key}={val}"
                                       for key, val in r.items()), flush=True)
    print(f"total {time.time() - t0:.0f} s")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        import csv
        with open(os.path.join(args.out, "bench.csv"), "w", newline="") as fp:
            w = csv.DictWriter(fp, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        with open(os.path.join(args.out, "bench.md"), "w") as fp:
            fp.write(markdown(rows))
    return 0


def markdown(rows: list[dict]) -> str:
    lines = ["| nodes | k | between | class file | loss | trials | detection | false drains per 1000 healthy | "
             "detectable loss (1 % var) |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['n']} | {r['k']} | {r['between']:.1%} | {'yes' if r['with_class'] else 'no'} | "
                     f"{r['loss']:.1%} | {r['trials']} | {r['detection']:.2%} | {r['false_per_1000']:.3f} "
                     f"({r['false_drains']} of {r['healthy_nodes']}) | {r['detectable_1pct']:.2%} |")
    return "\n".join(lines) + "\n"


def session(args: argparse.Namespace) -> int:
    """A ReFrame run report of a distributed session with --repeat: ``nodes`` x ``k`` test cases of
    3 checks of 10 perf variables each (the 30 variables, as GB/s), node ``--slow`` 7 % low on the
    slow variable."""
    rng = np.random.default_rng(args.seed)
    nodes = [f"nid{i:05d}" for i in range(args.nodes)]
    b = np.stack([fleet(rng, 1, args.nodes, args.k, sd, 0.002)[0] for sd in NOISE])  # (var, n, k)
    if args.slow is not None:
        b[SLOW_VARIABLE, nodes.index(args.slow)] += sc.loss_to_shift(0.07)
    values = 100.0 * np.exp(-b)
    cases: list[dict] = []
    for c in range(3):
        for i, node in enumerate(nodes):
            for r in range(args.k):
                name = f"SynthCheck{c} %method=host"
                perf = {f"syn:part:var{v:02d}": [float(values[c * 10 + v, i, r]), 0, None, None, "GB/s", "pass"]
                        for v in range(10)}
                cases.append({"name": name, "display_name": f"{name} %.part=syn:part %.nid={node} %.repeat_no={r}",
                              "system": "syn", "partition": "part", "environ": "builtin", "result": "pass",
                              "job_nodelist": [node], "num_tasks": 2, "perfvalues": perf,
                              "job_completion_time_unix": 1764748800.0 + len(cases), "fail_phase": None,
                              "fail_reason": None, "jobid": str(len(cases))})
    doc = {"session_info": {"uuid": f"synthetic-{args.seed}", "cmdline": "reframe --distribute=all "
                            f"--repeat={args.k} -r (gpucomm.analysis.fleetsim)", "time_end_unix": 1764750000.0,
                            "num_failures": 0},
           "runs": [{"testcases": cases}]}
    with open(args.out, "w") as fp:
        json.dump(doc, fp)
    print(f"{args.out}: {len(cases)} test cases ({args.nodes} nodes x {args.k} repeats x 3 checks)")
    return 0


def _floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gpucomm.analysis.fleetsim", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    b = sub.add_parser("bench", help="error rates of the fleet rule over seeded synthetic fleets")
    b.add_argument("--trials", type=int, default=20000)
    b.add_argument("--nodes", type=lambda s: [int(v) for v in s.split(",")], default=[6, 64])
    b.add_argument("--k", type=lambda s: [int(v) for v in s.split(",")], default=[5])
    b.add_argument("--between", type=_floats, default=[0.0, 0.002])
    b.add_argument("--loss", type=_floats, default=[0.035, 0.07])
    b.add_argument("--alpha", type=float, default=sc.ALPHA)
    b.add_argument("--min-loss", type=float, default=0.01)
    b.add_argument("--seed", type=int, default=1)
    b.add_argument("--with-class", choices=("both", "yes", "no"), default="both")
    b.add_argument("--out", help="folder for bench.csv and bench.md")
    s = sub.add_parser("session", help="a synthetic ReFrame run report (distributed, with --repeat)")
    s.add_argument("--nodes", type=int, default=1024)
    s.add_argument("--k", type=int, default=5)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--slow", help="this node 7 %% low on one 1 %% variable")
    s.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    return bench(args) if args.what == "bench" else session(args)


if __name__ == "__main__":
    sys.exit(main())
