"""The verdicts replayed on real sessions: the committed healthy runs dealt out, seeded, as fleets
(``gpucomm acceptance``'s rule) and as nights (``gpucomm nightly``'s drift), healthy and with a
loss injected, through the verdicts' own functions (acceptance.evaluate, drift.judge_measurements).

    python bench/studies/replay.py fleet  OUT [--pool x2|gpucluster|cicluster] [--nodes 4,6,16,64] [--k 3,5]
                                      [--trials 200] [--class] [--seed 1]
    python bench/studies/replay.py nights OUT [--pool x2|h100] [--trials 200] [--seed 1] [--within-call]
    python bench/studies/replay.py table OUT      # the markdown tables of OUT's results

Pools (every one a set of *runs*: the values of one repeat of every check of one node):
- ``x2``: the reference node's 26 healthy health sessions (local:h200x2, 2x H200;
  bench/results/2026-11-30-nvidia-h200-x2/{10-health,12-health,13-health-validation}), a session a
  run; 10-health's ipc-copy point-to-point values left out (its signalling changed after them, as
  the shipped references do), then every run cut to the variables all 26 measured;
- ``gpucluster``: the 4-node GPU cluster's three healthy acceptance sessions (4 nodes x 4 repeats,
  host ping-pong and all-reduce at 20 iterations; bench/results/2026-12-03-nvidia-h200/
  40-gpu-cluster-acceptance), a (session, node, repeat) a run: 48 runs;
- ``cicluster``: the CI's 4-node CPU cluster's three healthy sessions (4 x 5, the same checks;
  bench/results/2026-12-03-cpu-2core/40-ci-cluster-acceptance): 60 runs;
- ``h100``: one H100 node's 10 health sessions in three device calls (the host methods and the
  data paths, their ``_slowest`` copies of gpu0 left out; bench/results/2026-12-05-nvidia-h100-x1/
  52-health), a session a run.

A fleet of n nodes x k repeats gives each node k distinct runs of the pool (nodes share runs where
n k is more than the pool).  Counted per fleet: healthy nodes drained (false drains, per 1000 node
verdicts), suspects, nodes "not judged", the variables not judged (bimodal measurements).  Injected
into node n0 of the same deal: ``step``: 3.5 % on one variable of at most 1 % noise (the pool's
sd of log; a new one each trial), ``all10``: 10 % on every variable, ``half3``: 50 % on every
variable in 3 of its repeats (2 of 3 at k = 3).  ``--class``: a class file from another deal of
32 nodes x 5 (tolerances.class_document), as a site's earlier healthy batch.

Nights: a node's nights are the pool's runs in a random order (26 for x2), each judged against
the nights before it (drift.judge_measurements): false alarms per node-night (x 365: per
node-year), and a 5 % step on a variable of at most 1 % noise from night 16 on, found on night
16 or 17 (the second night).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
sys.path.insert(0, os.path.join(ROOT, "src"))

from gpucomm.analysis import acceptance, drift, statcore as sc  # noqa: E402
from gpucomm.analysis.inputs import load  # noqa: E402

RESULTS = os.path.join(ROOT, "bench", "results")
POOLS = {
    "x2": [os.path.join(RESULTS, "2026-11-30-nvidia-h200-x2", d, "reports", "report-health-*.json")
           for d in ("10-health", "12-health", "13-health-validation")],
    "gpucluster": [os.path.join(RESULTS, "2026-12-03-nvidia-h200", "40-gpu-cluster-acceptance", "call",
                                f"node-healthy-{i}.json") for i in (1, 2, 3)],
    "cicluster": [os.path.join(RESULTS, "2026-12-03-cpu-2core", "40-ci-cluster-acceptance", "call",
                               f"healthy-{i}.json") for i in (1, 2, 3)],
    "h100": [os.path.join(RESULTS, "2026-12-05-nvidia-h100-x1", "52-health", "call*", "reports", "report-s*.json")],
}
#: the pools whose runs are whole sessions of one node (the others: a node's repeat in a session)
SESSION_POOLS = ("x2", "h100")
INJECTIONS = ("step", "all10", "half3")


@dataclass
class Pool:
    """The runs of a pool: ``cases`` and ``perf`` rows with a ``run`` column, the runs' ids, each
    variable's noise (sd of log over the runs) and direction."""
    cases: pd.DataFrame
    perf: pd.DataFrame
    runs: list[str]
    noise: pd.Series
    by_run_cases: dict | None = None
    by_run_perf: dict | None = None


def load_pool(name: str) -> Pool:
    files = sorted(p for pattern in POOLS[name] for p in glob.glob(pattern))
    _, cases, perf = load(files).frames()
    cases = cases[cases["result"].isin(["pass", "fail"])].copy()
    perf = perf[perf["result"].isin(["pass", "fail"])].copy()
    if name in SESSION_POOLS:  # a session a run; 10-health's ipc-copy point-to-point left out
        old = perf["source"].str.contains("10-health") & perf["method"].eq("ipc-copy") & \
            perf["op"].isin(["pingpong", "pair-matrix"])
        old |= perf["source"].str.contains("10-health") & perf["var"].str.startswith("ipc-copy_") & \
            perf["test"].str.contains("pingpong")
        perf = perf[~old]
        if name == "h100":  # one GPU: its _slowest copied gpu0's (removed since: DataPathsCheck's perf_cases)
            perf = perf[~perf["var"].str.endswith("_slowest")]
        cases["run"], perf["run"] = cases["source"], perf["source"]
    else:
        for df in (cases, perf):
            df["run"] = df["source"] + "|" + df["node"].astype(str) + "|" + df["repeat"].astype(str)
    key = perf["test"] + "\t" + perf["var"]
    runs = sorted(perf["run"].unique())
    counts = perf.assign(key=key).groupby("key")["run"].nunique()
    keep = set(counts[counts == len(runs)].index)  # the variables every run measured
    perf = perf[key.isin(keep)].copy()
    perf["key"] = perf["test"] + "\t" + perf["var"]
    tests = cases.groupby("test")["run"].nunique()
    cases = cases[cases["test"].isin(set(tests[tests == len(runs)].index) & set(perf["test"]))]
    noise = perf.groupby("key").apply(lambda g: float(np.std(np.log(g["value"].astype(float)), ddof=1)),
                                      include_groups=False)
    return Pool(cases.reset_index(drop=True), perf.reset_index(drop=True), runs, noise)


def deal(pool: Pool, n: int, k: int, rng: np.random.Generator) -> list[list[str]]:
    """k distinct runs for each of n nodes."""
    return [list(rng.choice(pool.runs, size=k, replace=False)) for _ in range(n)]


def fleet_frames(pool: Pool, order: list[list[str]], inject: tuple | None = None
                 ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(cases, perf) of a dealt fleet as ``acceptance.read_sessions`` gives them: node ``nI``,
    repeat R; ``inject``: (kind, key) applied to n0."""
    by_run_c, by_run_p = _tables(pool)
    cs, ps = [], []
    for i, runs in enumerate(order):
        for r, run in enumerate(runs):
            c = by_run_c[run].assign(node=f"n{i}", nodes=f"n{i}", repeat=r, session="replay",
                                                             source="replay", retried=None)
            p = by_run_p[run].assign(node=f"n{i}", nodes=f"n{i}", repeat=r, session="replay", source="replay")
            if inject and i == 0:
                p = _injected(p, inject, r)
            cs.append(c)
            ps.append(p)
    cases, perf = pd.concat(cs, ignore_index=True), pd.concat(ps, ignore_index=True)
    cases["case"] = cases["test"] + " %.nid=" + cases["node"] + " %.repeat_no=" + cases["repeat"].astype(str)
    return cases, perf


def _tables(pool: Pool) -> tuple[dict, dict]:
    """{run: its cases}, {run: its perf rows}, made once."""
    if pool.by_run_cases is None or pool.by_run_perf is None:
        pool.by_run_cases = {r: g.drop_duplicates("test") for r, g in pool.cases.groupby("run")}
        pool.by_run_perf = {r: g for r, g in pool.perf.groupby("run")}
    return pool.by_run_cases, pool.by_run_perf


def _injected(p: pd.DataFrame, inject: tuple, r: int) -> pd.DataFrame:
    """``p`` with n0's injection (kind, key) in its repeat ``r``."""
    kind, key = inject
    if kind == "half3" and r >= 3:
        return p
    hit = (p["key"] == key).to_numpy() if kind == "step" else np.ones(len(p), dtype=bool)
    return _scaled(p, hit, {"step": 0.035, "all10": 0.10, "half3": 0.5}[kind])


def _scaled(p: pd.DataFrame, hit: np.ndarray, loss: float) -> pd.DataFrame:
    """``p`` with the values at ``hit`` a ``loss`` slower (a rate times 1 - loss, a time over it)."""
    worse = np.array([sc.worse_sign(u) for u in p["unit"]])
    factor = np.where(worse > 0, 1 / (1 - loss), 1 - loss)
    return p.assign(value=np.where(hit, p["value"].astype(float) * factor, p["value"].astype(float)))


def quiet_keys(pool: Pool, at_most: float = 0.01) -> list[str]:
    return sorted(pool.noise[pool.noise <= at_most].index)


def class_of(pool: Pool, rng: np.random.Generator, n: int = 32, k: int = 5) -> dict:
    """A class file's contents from another deal (tolerances.class_document), as acceptance loads it."""
    from gpucomm.analysis import tolerances
    cases, perf = fleet_frames(pool, deal(pool, n, k, rng))
    doc = tolerances.class_document(cases, perf, ["replay"])
    return acceptance.class_from_document(doc, "replay-class")


def run_fleets(pool: Pool, n: int, k: int, trials: int, seed: int, with_class: bool, log) -> dict:
    rng = np.random.default_rng(seed)
    quiet = quiet_keys(pool)
    counts = {"healthy_nodes": 0, "false_drains": 0, "suspects": 0, "not_judged": 0, "bimodal": {},
              **{f"{kind}_found": 0 for kind in INJECTIONS}, **{f"{kind}_suspect": 0 for kind in INJECTIONS},
              "injected_false_drains": 0, "injected_healthy": 0}
    cls = class_of(pool, np.random.default_rng(seed + 1000)) if with_class else None
    opts = acceptance.Options(cls=cls)
    for t in range(trials):
        order = deal(pool, n, k, rng)
        v = acceptance.evaluate(*fleet_frames(pool, order), opts)
        drained = {r["node"] for r in v.drain}
        counts["healthy_nodes"] += n
        counts["false_drains"] += len(drained)
        counts["suspects"] += len({r["node"] for r in v.suspects})
        counts["not_judged"] += len(acceptance.not_judged(v))
        for row in v.noise:
            if row["verdict"].startswith("not judged"):
                name = f"{row['check']} {row['variable']}"
                counts["bimodal"][name] = counts["bimodal"].get(name, 0) + 1
        for d in sorted(drained):
            print(f"n={n} k={k} trial {t} healthy: drained {d}: "
                  + "; ".join(f"{r['check']} {r['reason']}" for r in v.drain if r["node"] == d), file=log)
        for kind in INJECTIONS:
            if kind == "step" and not quiet:
                continue
            key = quiet[int(rng.integers(len(quiet)))] if kind == "step" else None
            v = acceptance.evaluate(*fleet_frames(pool, order, (kind, key)), opts)
            counts[f"{kind}_found"] += any(r["node"] == "n0" for r in v.drain)
            counts[f"{kind}_suspect"] += any(r["node"] == "n0" for r in v.suspects)
            others = {r["node"] for r in v.drain} - {"n0"}
            counts["injected_false_drains"] += len(others)
            counts["injected_healthy"] += n - 1
    return counts


def fleet_table(args: argparse.Namespace) -> None:
    pool = load_pool(args.pool)
    os.makedirs(args.out, exist_ok=True)
    tag = f"{args.pool}{'-class' if args.with_class else ''}-n{'_'.join(map(str, args.nodes))}"
    rows = []
    with open(os.path.join(args.out, f"fleet-{tag}.log"), "w") as log:
        print(f"pool {args.pool}: {len(pool.runs)} runs, {len(pool.noise)} variables, "
              f"{len(quiet_keys(pool))} of at most 1 % noise", file=log)
        for n in args.nodes:
            for k in args.k:
                if k > len(pool.runs):
                    continue
                t0 = time.time()
                c = run_fleets(pool, n, k, args.trials, args.seed, args.with_class, log)
                rows.append(_fleet_row(args, n, k, c, time.time() - t0))
                print(json.dumps(rows[-1]), file=log, flush=True)
                print(_fmt(rows[-1]), flush=True)
    pd.DataFrame(rows).to_csv(os.path.join(args.out, f"fleet-{tag}.csv"), index=False)


def _fleet_row(args: argparse.Namespace, n: int, k: int, c: dict, secs: float) -> dict:
    per = 1000 / max(c["healthy_nodes"], 1)
    return dict(pool=args.pool, class_file=args.with_class, nodes=n, k=k, trials=args.trials,
                healthy_verdicts=c["healthy_nodes"], false_drains=c["false_drains"],
                false_drains_per_1000=round(c["false_drains"] * per, 2),
                suspects_per_1000=round(c["suspects"] * per, 1), not_judged=c["not_judged"],
                step35_drained=c["step_found"] / args.trials, step35_suspect=c["step_suspect"] / args.trials,
                all10_drained=c["all10_found"] / args.trials, all10_suspect=c["all10_suspect"] / args.trials,
                half3_drained=c["half3_found"] / args.trials, half3_suspect=c["half3_suspect"] / args.trials,
                injected_false_drains=c["injected_false_drains"], injected_healthy=c["injected_healthy"],
                variables_not_judged="; ".join(f"{k_} {v}" for k_, v in sorted(c["bimodal"].items())),
                seconds=round(secs, 1))


def _fmt(r: dict) -> str:
    return (f"{r['pool']}{' +class' if r['class_file'] else ''} n={r['nodes']} k={r['k']}: false drains "
            f"{r['false_drains']}/{r['healthy_verdicts']} ({r['false_drains_per_1000']}/1000), suspects "
            f"{r['suspects_per_1000']}/1000, not judged {r['not_judged']}; drained: 3.5% step "
            f"{r['step35_drained']:.1%}, 10% all {r['all10_drained']:.1%}, 50% in 3 repeats "
            f"{r['half3_drained']:.1%} ({r['seconds']} s)")


# -- nights --------------------------------------------------------------------------------------

def night_frames(pool: Pool, order: list[str], step: tuple | None = None) -> pd.DataFrame:
    """drift.measurements' rows of one node whose night i is run ``order[i]`` (a day apart);
    ``step``: (key, first night) 5 % slower from that night on."""
    by_run = _tables(pool)[1]
    rows = []
    for i, run in enumerate(order):
        p = by_run[run].assign(node="n0", nodes="n0", session=f"night{i}", night=i, time=1.8e9 + i * 86400.0,
                               healthy=True, current=(i == len(order) - 1), software="")
        if step and i >= step[1]:
            p = _scaled(p, (p["key"] == step[0]).to_numpy(), 0.05)
        rows.append(p)
    return pd.concat(rows, ignore_index=True)


def night_orders(pool: Pool, rng: np.random.Generator, within_call: bool) -> list[str]:
    """One node's nights: every run of the pool in a random order, or (``within_call``) the runs of
    one device call (the x2 pool's folder; its level, one machine instance), in a random order."""
    if not within_call:
        return list(rng.permutation(pool.runs))
    calls: dict[str, list[str]] = {}
    for r in pool.runs:
        calls.setdefault(os.path.basename(os.path.dirname(os.path.dirname(r))), []).append(r)
    big = [c for c in sorted(calls) if len(calls[c]) >= drift.MIN_NIGHTS + 3]
    return list(rng.permutation(calls[big[int(rng.integers(len(big)))]]))


def run_nights(args: argparse.Namespace) -> None:
    pool = load_pool(args.pool)
    rng = np.random.default_rng(args.seed)
    quiet = quiet_keys(pool)
    n = len(night_orders(pool, np.random.default_rng(0), args.within_call))
    first_step = min(16, n - 2)
    alarms = judged_nights = blind = 0
    caught1 = caught2 = 0
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"nights-{args.pool}{'-call' if args.within_call else ''}.log"), "w") as log:
        for t in range(args.trials):
            order = night_orders(pool, rng, args.within_call)
            d = drift.judge_measurements(night_frames(pool, order), [])
            tab = d.table
            late = tab[tab["night"] >= drift.MIN_NIGHTS]
            for night, g in late.groupby("night"):
                judged_nights += 1
                failed = g[g["status"] == "FAIL"]
                alarms += bool(len(failed)) or bool(_score_failed(d, night))
                if len(failed):
                    print(f"trial {t} night {night}: FAIL " + "; ".join(f"{r.test} {r.var} {r.rule}"
                                                                      for r in failed.itertuples()), file=log)
            blind += int((d.latest["status"] == "blind").sum())
            key = quiet[int(rng.integers(len(quiet)))]
            hits = []
            for last in (first_step, first_step + 1):
                d2 = drift.judge_measurements(night_frames(pool, order[:last + 1], (key, first_step)), [])
                tk, var = key.split("\t")
                row = d2.latest[(d2.latest["test"] == tk) & (d2.latest["var"] == var)]
                hits.append(bool(len(row)) and row["status"].iloc[0] == "FAIL")
            caught1 += hits[0]
            caught2 += hits[0] or hits[1]
    summary = dict(pool=args.pool, within_call=args.within_call, nights=n, step_from_night=first_step,
                   trials=args.trials, nights_judged=judged_nights, false_alarm_nights=alarms,
                   false_alarms_per_node_year=round(365 * alarms / max(judged_nights, 1), 2),
                   step5_first_night=caught1 / args.trials, step5_by_second_night=caught2 / args.trials,
                   blind_variables_last_night=blind / args.trials)
    print(json.dumps(summary))
    with open(os.path.join(args.out, f"nights-{args.pool}{'-call' if args.within_call else ''}.json"), "w") as fp:
        json.dump(summary, fp, indent=1)


def _score_failed(d, night) -> bool:
    s = getattr(d, "scores", None)
    if s is None or s.empty:
        return False
    return bool((s[(s["night"] == night)]["status"] == "FAIL").any())


def tables(out: str) -> str:
    """The markdown tables of every fleet-*.csv and nights-*.json in ``out``."""
    lines = ["| pool | class file | nodes | k | healthy node verdicts | false drains (per 1000) | suspects per 1000 | "
             "not judged | 3.5 % on a <= 1 % variable | 10 % on every variable | 50 % in 3 repeats |",
             "|" + "---|" * 11]
    pct = "{:.1%}".format
    for path in sorted(glob.glob(os.path.join(out, "fleet-*.csv"))):
        for r in pd.read_csv(path).to_dict("records"):
            found = [f"{pct(r[f'{x}_drained'])}" + (f" (+{pct(r[f'{x}_suspect'])} suspect)" if r["k"] < 4 else "")
                     for x in ("step35", "all10", "half3")]
            lines.append(f"| {r['pool']} | {'yes' if r['class_file'] else 'no'} | {r['nodes']} | {r['k']} | "
                         f"{r['healthy_verdicts']} | {r['false_drains']} ({r['false_drains_per_1000']}) | "
                         f"{r['suspects_per_1000']} | {r['not_judged']} | " + " | ".join(found) + " |")
    lines += ["", "| nights | trials | nights judged | false-alarm nights | per node-year | 5 % step: first night | "
              "by the second |", "|" + "---|" * 7]
    for path in sorted(glob.glob(os.path.join(out, "nights-*.json"))):
        r = json.load(open(path))
        what = "one device call" if r.get("within_call") else f"all {r['nights']} sessions"
        lines.append(f"| {r['pool']}: {what} | {r['trials']} | {r['nights_judged']} | {r['false_alarm_nights']} | "
                     f"{r['false_alarms_per_node_year']} | {pct(r['step5_first_night'])} | "
                     f"{pct(r['step5_by_second_night'])} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    if argv is None and len(sys.argv) > 2 and sys.argv[1] == "table":
        print(tables(sys.argv[2]))
        return 0
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("what", choices=("fleet", "nights"))
    ap.add_argument("out")
    ap.add_argument("--pool", choices=tuple(POOLS), default="x2")
    ap.add_argument("--nodes", type=lambda s: [int(x) for x in s.split(",")], default=[4, 6, 16, 64])
    ap.add_argument("--k", type=lambda s: [int(x) for x in s.split(",")], default=[3, 5])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--class", dest="with_class", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--within-call", action="store_true",
                    help="nights: the runs of one device call only (x2: one machine instance's level)")
    args = ap.parse_args(argv)
    if args.what == "fleet":
        fleet_table(args)
    else:
        run_nights(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
