"""The drift rewrite's check (MANIFEST, "history"): judge the same generated nights with the drift
of two trees and compare.  ``series``: 400 random series (3-80 nights, every rule in play) through
judge_series; ``nodes``: 24 nodes of 4-40 nights, with missing nights, NaN values, a unit of no
direction and steps, through judge_measurements.

    python same_drift.py dump SRC OUT.pkl     # with the tree SRC's gpucomm
    python same_drift.py compare OLD.pkl NEW.pkl
"""

import pickle
import sys

import numpy as np
import pandas as pd


def _series(drift):
    rng = np.random.default_rng(7)
    out = []
    for i in range(400):
        n = int(rng.choice([3, 6, 8, 25, 45, 60, 80]))
        unit = str(rng.choice(["GB/s", "us"]))
        sign = 1 if unit == "us" else -1
        s = drift.Series(key=("x", "p", f"n{i}", "T", "v"), unit=unit, sign=sign)
        step_at, step = int(rng.integers(1, n + 1)), rng.choice([0, 0.03, 0.08, 0.2])
        rate, noise = rng.choice([0, 0, 0.004]), rng.choice([0.003, 0.01, 0.05])
        for t in range(n):
            k = int(rng.choice([1, 2, 3, 5]))
            shift = (step if t >= step_at else 0) + rate * t
            v = (100 * (1 - shift) if unit == "GB/s" else 5 * (1 + shift)) * np.exp(rng.normal(0, noise, k))
            if rng.random() < 0.05:
                v[0] = np.nan
            if rng.random() < 0.1:
                v = v * (1 + rng.uniform(0.05, 0.3) * (1 if unit == "us" else -1))
            s.nights.append(drift.sc.badness(v, sign))
            s.times.append(1e9 + t * 86400)
            s.sessions.append(f"s{t}")
            s.healthy.append(bool(rng.random() < 0.93))
            s.current.append(t == n - 1)
            s.run_se.append(rng.uniform(0.001, 0.02, k) if rng.random() < 0.5 else np.full(k, np.nan))
        out.append(drift.judge_series(s, [int(rng.integers(2, 40))] * n))
    return out


def _nodes(drift):
    rng = np.random.default_rng(11)
    rows = []
    for n in range(24):
        nights = int(rng.choice([4, 6, 9, 14, 40]))
        for v in range(10):
            unit = ["GB/s", "us", "x"][v % 3] if v != 9 else "widgets"
            gone = set(rng.choice(nights, size=2, replace=False).tolist()) if rng.random() < 0.3 else set()
            step_at, step = int(rng.integers(2, nights + 1)), rng.choice([0, 0, 0.05, 0.15])
            for t in (t for t in range(nights) if t not in gone):
                worse = 1 if unit == "us" else -1
                for j in range(int(rng.choice([1, 2, 5]))):
                    val = 10 * np.exp(worse * (step if t >= step_at else 0)) * np.exp(rng.normal(0, 0.02))
                    rows.append({"system": "s", "partition": "p", "node": f"n{n:02d}", "test": f"T{v % 4}",
                                 "var": f"v{v}", "unit": unit, "lower": -0.1 if unit == "x" else None,
                                 "upper": None, "value": np.nan if rng.random() < 0.03 else val,
                                 "time": 1e9 + t * 86400 + j, "session": f"s{t}", "night": t,
                                 "healthy": bool(rng.random() < 0.95 or t == nights - 1),
                                 "current": t == nights - 1,
                                 "rel_se": rng.uniform(0.001, 0.01) if rng.random() < 0.5 else np.nan})
    df = pd.DataFrame(rows)
    df["healthy"] = df.groupby(["node", "night"])["healthy"].transform("all")
    d = drift.judge_measurements(df)
    return d.table, d.latest, d.notes


def compare(old, new):
    bad = sum(1 for x, y in zip(old["series"], new["series"]) if not _same(x, y))
    print(f"series: {len(old['series'])}, differ {bad}; statuses "
          f"{pd.concat(old['series'])['status'].value_counts().to_dict()}")
    (t1, l1, n1), (t2, l2, n2) = old["nodes"], new["nodes"]
    same = n1 == n2 and _same(t1, t2) and _same(l1, l2)
    print(f"nodes: table {t1.shape}, notes {len(n1)}, the same: {same}; statuses "
          f"{t1['status'].value_counts().to_dict()}")
    return 0 if bad == 0 and same else 1


def _same(x, y):
    try:  # the same rows in order; columns by name; floats to 1e-9
        pd.testing.assert_frame_equal(x.reset_index(drop=True), y.reset_index(drop=True), rtol=1e-9,
                                      check_dtype=False, check_like=True)
        return True
    except AssertionError:
        return False


if __name__ == "__main__":
    if sys.argv[1] == "dump":
        sys.path.insert(0, sys.argv[2] + "/src")
        from gpucomm.analysis import drift
        pickle.dump({"series": _series(drift), "nodes": _nodes(drift)}, open(sys.argv[3], "wb"))
    else:
        sys.exit(compare(pickle.load(open(sys.argv[2], "rb")), pickle.load(open(sys.argv[3], "rb"))))
