"""A seeded generator of a node's nights, and the benchmark of the nightly drift verdict over it
(``drift``; bench/results/nightly.md, "Error budget").

A night measures each variable ``k`` times (``--repeat k``); a measurement is the variable's level
times ``exp(noise * N(0, 1))`` (badness spreads by factors), independent between measurements;
with probability ``transient`` a measurement is transiently 5-30 % slow (another job's traffic, a
daemon: a retest later the same night is not).  A change is a ``step`` (a loss from a night on) or
a ``ramp`` (a loss growing by ``size`` per night from a night on).

    python -m gpucomm.analysis.drift_synthetic --years 3 --nodes 10 --trials 400 --out DIR
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import drift, statcore as sc
from .fleetsim import SLOW_FRACTION, SLOW_RANGE

if TYPE_CHECKING:
    import pandas as pd


#: the noise levels of the benchmark's variables (10 each, as the fleet verdict's benchmark)
NOISES = (0.005,) * 10 + (0.01,) * 10 + (0.05,) * 10
#: the probability that one measurement is transiently slow, and how slow
TRANSIENT = SLOW_FRACTION
TRANSIENT_LOSS = SLOW_RANGE


def night_values(rng: np.random.Generator, n: int, noise: float, k: int, transient: float = TRANSIENT,
                 loss: np.ndarray | None = None, time_unit: bool = False) -> list:
    """``n`` nights of one variable (level 100): a list of arrays of ``k`` measurements;
    ``loss[i]``: night i's loss of performance (0: healthy)."""
    eps = noise * rng.standard_normal((n, k))
    slow = rng.random((n, k)) < transient
    extra = np.where(slow, -np.log1p(-rng.uniform(*TRANSIENT_LOSS, (n, k))), 0.0)
    shift = np.asarray(sc.loss_to_shift(np.zeros(n) if loss is None else np.asarray(loss, dtype=float)))
    bad = eps + extra + shift[:, None]
    values = 100.0 * np.exp(bad if time_unit else -bad)
    return [row for row in values]


def series(nights: list, unit: str) -> drift.Series:
    sign = sc.worse_sign(unit)
    s = drift.Series(key=("synthetic", "node", "nid0", "test", "var"), unit=unit, sign=sign)
    for i, vals in enumerate(nights):
        s.nights.append(sc.badness(np.asarray(vals, dtype=float), sign))
        s.times.append(1.8e9 + 86400.0 * i)
        s.healthy.append(True)
        s.sessions.append(f"night-{i}")
    return s


def alarms(res: pd.DataFrame) -> int:
    """Alarm events of a judged series: FAIL nights whose night before was no FAIL."""
    fail = (res["status"] == "FAIL").to_numpy()
    return int(np.sum(fail & ~np.r_[False, fail[:-1]]))


def false_alarms(seed: int, nodes: int, nights: int, k: int, m: int = len(NOISES),
                 transient: float = TRANSIENT) -> dict:
    """Healthy nodes (``NOISES``' variables, transients): alarms, suspects and nights judged."""
    rng = np.random.default_rng(seed)
    total, suspects, judged = 0, 0, 0
    per_noise: dict[float, int] = {}
    for _ in range(nodes):
        for j, noise in enumerate(NOISES[:m]):
            unit = "us" if j % 2 else "GB/s"
            vals = night_values(rng, nights, noise, k, transient, time_unit=unit == "us")
            res = drift.judge_series(series(vals, unit), [len(NOISES)] * nights)
            a = alarms(res)
            total += a
            per_noise[noise] = per_noise.get(noise, 0) + a
            suspects += int((res["status"] == "suspect").sum())
            judged += int((res["status"] != "new").sum()) if j == 0 else 0
    node_nights = nodes * nights
    return {"seed": seed, "nodes": nodes, "nights_per_node": nights, "k": k, "variables": m, "transient": transient,
            "alarms": total, "alarms_by_noise": {str(k_): v for k_, v in per_noise.items()},
            "suspects": suspects, "node_nights": node_nights,
            "alarms_per_node_per_365_nights": total / node_nights * 365}


def detection(seed: int, trials: int, noise: float, kind: str, size: float, k: int, history: int = drift.WINDOW,
              after: int = 40) -> dict:
    """``trials`` series with ``history`` healthy nights, then a change: the nights after it until the
    first FAIL (0 = its first night) per trial; detected within 1, 3 nights."""
    rng = np.random.default_rng(seed)
    delays = []
    for _ in range(trials):
        n = history + after
        loss = np.zeros(n)
        steps = np.arange(after)
        loss[history:] = size if kind == "step" else np.minimum(0.9, size * (steps + 1))
        res = drift.judge_series(series(night_values(rng, n, noise, k, loss=loss), "GB/s"), [len(NOISES)] * n)
        fail = np.flatnonzero((res["status"] == "FAIL").to_numpy()[history:])
        delays.append(int(fail[0]) if len(fail) else None)
    found = [d for d in delays if d is not None]
    return {"seed": seed, "trials": trials, "noise": noise, "kind": kind, "size": size, "k": k, "history": history,
            "first_night": sum(d == 0 for d in found) / trials, "within_3_nights": sum(d <= 2 for d in found) / trials,
            "within_10_nights": sum(d <= 9 for d in found) / trials,
            "median_delay_nights": float(np.median(found)) + 1 if found else None,
            "never": sum(d is None for d in delays)}


def detectable_table(noises: Sequence[float] = (0.005, 0.01, 0.05), histories: Sequence[int] = (5, 10, 20, 30, 60),
                     ks: Sequence[int] = (1, 2), m: int = len(NOISES), power: float = sc.POWER) -> list:
    """The one-night rule's detectable loss (found with ``power``) per noise, history length and k,
    from the bounds and the standard error, where the history's spread is the noise's own."""
    out = []
    for noise in noises:
        for n in histories:
            for k in ks:
                b1, b2 = drift.bounds(m, n - 1)
                own = (sc.location_sd(k) * noise) ** 2 if k > 1 else noise ** 2
                se = float(np.sqrt(own + own / n))  # tonight's own spread and the history centre's error
                out.append({"noise": noise, "history": n, "k": k, "b1": round(b1, 2), "b2": round(b2, 2),
                            "one_night": sc.detectable_loss(se, b1, power),
                            "two_nights": sc.detectable_loss(se, b2, power ** 0.5)})
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m gpucomm.analysis.drift_synthetic", description=__doc__.split("\n")[0])
    p.add_argument("--years", type=float, default=3.0)
    p.add_argument("--nodes", type=int, default=10)
    p.add_argument("--trials", type=int, default=400)
    p.add_argument("--seed", type=int, default=41)
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    if os.path.exists(a.out) and os.listdir(a.out):
        print(f"drift_synthetic: error: {a.out} is not empty", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    nights = int(a.years * 365)
    res: dict[str, Any] = {"false_alarms": {f"k={k}": false_alarms(a.seed + k, a.nodes, nights, k) for k in (2, 1)}}
    det: list[dict] = []
    for k, noise, kind, size in ((2, 0.01, "step", 0.05), (2, 0.01, "step", 0.03), (2, 0.005, "step", 0.03),
                                 (2, 0.05, "step", 0.2), (2, 0.01, "ramp", 0.001), (2, 0.01, "ramp", 0.002),
                                 (1, 0.01, "step", 0.05), (1, 0.01, "step", 0.03), (1, 0.01, "ramp", 0.002)):
        det.append(detection(a.seed + 100 * k + len(det), a.trials, noise, kind, size, k,
                             after=10 if kind == "step" else 40))
    res["detection"] = det
    res["detectable"] = detectable_table()
    res["seconds"] = round(time.time() - t0, 1)
    res["constants"] = {"ALPHA_NIGHT": drift.ALPHA_NIGHT, "MIN_NIGHTS": drift.MIN_NIGHTS, "WINDOW": drift.WINDOW,
                        "CUSUM_NIGHTS": drift.CUSUM_NIGHTS, "CUSUM_K": drift.CUSUM_K, "CUSUM_CLIP": drift.CUSUM_CLIP,
                        "h(m=30)": drift.cusum_h(30), "TRANSIENT": TRANSIENT, "TRANSIENT_LOSS": TRANSIENT_LOSS}
    with open(os.path.join(a.out, "results.json"), "w") as fp:
        json.dump(res, fp, indent=1)
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
