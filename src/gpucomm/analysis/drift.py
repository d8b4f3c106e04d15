"""Nightly drift: each night of a node judged against that node's own healthy history
(docs/nightly.md, "Against the node's own history").

The references of ``config/references/`` are wide on purpose (a node class, every healthy run);
this module asks a narrower question of each (system, partition, node, test, variable): is tonight
slower than this node was?  It uses the statistics core (``statcore``, docs/statistics.md:
badness = signed logarithm, ``location`` of a night's measurements, ``within`` pooled over nights
with repeats, ``spread`` of the history's night values, ``bound``, floors), with nights in place
of nodes:

* **history**: the node's healthy nights (no test case of the node failed that night), after
  ``--since`` and after the last change of its software (``software`` column: the test case's
  environment, modules and environment variables less the per-run ones, the versions its run
  recorded, ReFrame's version), at most ``WINDOW`` of them, without the nights this judgement
  flagged;
* **noise**: the within-night spread from nights with several measurements (``--repeat``, a
  retest), the night-to-night spread of the history's night values (their standard deviation)
  beyond it; the history's location is the centre (its own error is in the standard error);
  tonight's own declared error (each measurement's ``rel_se``, the session report's precision)
  is added to tonight's standard error in quadrature where known: a night that could not
  measure precisely is not called slower on the noise it declared;
* **three rules**, each given a third of ``ALPHA_NIGHT`` (false alarms per node per healthy night,
  family-wise over the node's ``m`` variables and its score; Student's t with the history's
  degrees of freedom, so a short history asks for a larger z):

  - ``step``: tonight's z above ``b1``, confirmed by most of the night's measurements (each
    against one measurement's standard error: a node slow in 3 of its 5 measurements is slow);
    with one measurement, or not confirmed, it is a **suspect** (the night exits
    EXIT_RETEST, never 0), not a failure;
  - ``two nights``: z above ``b2`` (at ``sqrt(ALPHA_NIGHT / 3 / m)``) tonight and the night before;
  - each rule also distribution-free (``_night_tail``): tonight worse than every night of its
    history (or all but ALPHA_NIGHT / 3 of them, where it has that many), and for two nights each
    of them, their tails' product at most TWO_NIGHTS_TAIL: a history whose nights spread in modes
    or heavy tails (machine instances, a bimodal measurement) has had such nights before, and is
    no step;
  - ``drift``: a one-sided CUSUM over the last ``CUSUM_NIGHTS`` nights against the history before
    them (``cusum_h``: Siegmund's in-control run length of ``3 m / ALPHA_NIGHT`` nights);

* the node's **score** (``score_series``): tonight the mean of its variables' z (each clipped at
  statcore.CLIP), against the scores its history's nights would have had (leave one out): a node
  slower on many variables in one night fails that night (z above b1, above every history night,
  its median loss at least SCORE_MIN_LOSS), though no single variable is beyond its bound;
* fewer than ``MIN_NIGHTS`` healthy nights: the variable is judged by its references alone, and
  the verdict says how many nights are missing;
* a variable so noisy that its two-nights rule cannot see ``BLIND_LOSS`` (``sees``: the loss
  found with 99 % probability, statcore.detectable_loss at ``b2``) is **blind**: its rules still
  run, but a night they do not flag is no "ok" of it; references only, and the verdict says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Sequence

import numpy as np
import pandas as pd
from scipy import optimize

from . import statcore as sc

#: false alarms per node per healthy night, family-wise over its variables and the three rules
#: (1 per node per 365 nights)
ALPHA_NIGHT = 1 / 365
#: false alarms per node and 365 healthy nights measured on real nights: the reference node's 10
#: health sessions of one device call, in random orders (bench/studies/replay.py nights --within-call;
#: bench/results/2026-12-05-cpu-2core/51-replay): heavy tails the design's normal history misses
REPLAYED_FALSE_ALARMS_PER_YEAR = 6.3
#: fewer healthy nights than this in a variable's history: references only
MIN_NIGHTS = 5
#: the most recent healthy nights a night is judged against
WINDOW = 60
#: the CUSUM's window (the last nights it sums over) and the history it needs before that window
CUSUM_NIGHTS = 20
CUSUM_MIN_REF = 30
#: the CUSUM's reference value and the clip of one night's increment, in standard errors; the
#: reference value grows by CUSUM_CENTRE_Z standard deviations of the history's centre (an error
#: of it is common to every night of the window: it would sum up like a drift)
CUSUM_K = 0.75
CUSUM_CLIP = 4.0
CUSUM_CENTRE_Z = 2.0
#: the step rule's confirmation: most of the night's measurements at least this many standard
#: errors of one measurement worse than the history's centre
CONFIRM_Z = 2.2
#: the two-nights rule's distribution-free part: the two nights' tails (each among its history)
#: multiply to at most this: each worse than every night of a history of 6 or more (1/7 x 1/7); a
#: history of 5 nights cannot say it (two of its worst of 6 come together that often by chance)
TWO_NIGHTS_TAIL = 1 / 49
#: the most nights of a node judged (the older ones are outside every window of tonight's rules)
MAX_NIGHTS = 2 * WINDOW + CUSUM_NIGHTS
#: sessions of one node less than this many hours apart are one night (a retest joins its night)
NIGHT_GAP_H = 6.0
#: ReFrame's results that are no failure of the node
GOOD = ("pass", "xfail", "skip")
#: a variable whose two-nights rule cannot see this loss is "blind" (references only, said)
BLIND_LOSS = sc.BLIND_LOSS
#: the statuses of one variable on one night, worst first
STATUSES = ("FAIL", "suspect", "blind", "ok", "new")
#: the node score's test and variable names in the tables
SCORE_TEST, SCORE_VAR = "node score", "every variable at once"
#: a night's score fails it only where the node's median loss over its variables is at least this
SCORE_MIN_LOSS = 0.02


class DriftInputError(ValueError):
    """Nights that cannot be judged as given (tonight before its history, --since after tonight)."""


@lru_cache(maxsize=None)
def bounds(m: int, df: int, alpha: float = ALPHA_NIGHT) -> tuple[float, float]:
    """(b1, b2): the z bounds of the one-night rule and of the two-nights rule for a node judged
    on ``m`` variables against a history of ``df + 1`` nights (statcore.bound)."""
    a = alpha / 3
    d = df if df >= 1 else math.inf
    return sc.bound(a, max(1, m), d), sc.bound(math.sqrt(a / max(1, m)), 1, d)


@lru_cache(maxsize=None)
def cusum_h(m: int, alpha: float = ALPHA_NIGHT, k: float = CUSUM_K) -> float:
    """The CUSUM threshold whose in-control average run length (Siegmund's approximation,
    ``(exp(2 k h') - 2 k h' - 1) / (2 k^2)`` with ``h' = h + 1.166``) is ``3 m / alpha`` nights."""
    arl = 3 * max(1, m) / alpha

    def gap(h: float) -> float:
        hp = 2 * k * (h + 1.166)
        return (math.exp(hp) - hp - 1) / (2 * k * k) - arl
    return float(optimize.brentq(gap, 0.0, 200.0))


@dataclass
class Series:
    """One variable of one node: its nights in order (each an array of the night's badness)."""
    key: tuple
    unit: str
    nights: list = field(default_factory=list)      # arrays of badness
    times: list = field(default_factory=list)       # the night's first session time (unix s)
    healthy: list = field(default_factory=list)     # the node passed that night
    sessions: list = field(default_factory=list)
    current: list = field(default_factory=list)     # the night holds a session of this run
    sign: int = 0                                   # statcore.worse_sign of its unit (0: from the unit)
    run_se: list = field(default_factory=list)      # arrays of each measurement's own standard error


def judge_series(s: Series, m_of: Sequence[int], alpha: float = ALPHA_NIGHT,
                 min_loss: float | None = None) -> pd.DataFrame:
    """Judge every night of ``s`` against the nights before it (``m_of[i]``: the node's number of
    variables on night i): one row per night (status, rule, value, centre, change, z, bounds,
    CUSUM, history length).  ``min_loss``: the practical floor below which no night is flagged
    (None: statcore.MIN_LOSS of the variable's kind)."""
    return _in_units(pd.DataFrame(_judge_rows(s, m_of, alpha, min_loss)), s)


def _judge_rows(s: Series, m_of: Sequence[int], alpha: float = ALPHA_NIGHT,
                min_loss: float | None = None) -> list[dict[str, Any]]:
    """judge_series's rows as dicts, before _in_units (judge_measurements builds one table a node)."""
    if min_loss is None:
        min_loss = sc.min_loss(s.unit, s.sign) if s.sign else 0.0
    n_nights = len(s.nights)
    val = np.full(n_nights, np.nan)
    ks = np.zeros(n_nights, dtype=int)
    usable = np.zeros(n_nights, dtype=bool)
    zs = np.full(n_nights, np.nan)
    cus = np.full(n_nights, np.nan)
    rows: list = []
    for t in range(n_nights):
        b = np.asarray(s.nights[t], dtype=float)
        b = b[np.isfinite(b)]
        ks[t] = len(b)
        ref = np.flatnonzero(usable[:t])[-WINDOW:]
        within = _within(s.nights, ref)
        if len(b):
            val[t] = float(sc.location(b, within if math.isfinite(within) else None))
        row: dict[str, Any] = {"night": t, "time": s.times[t], "session": s.sessions[t],
                               "current": bool(s.current[t]) if s.current else t == n_nights - 1, "k": int(ks[t]),
                               "history": len(ref), "healthy": bool(s.healthy[t]), "status": "new",
                               "rule": "", "value_bad": val[t], "median_bad": np.nan, "se": np.nan,
                               "z": np.nan, "b1": np.nan, "b2": np.nan, "cusum": np.nan, "h": np.nan,
                               "sees": np.nan}
        if len(b) and len(ref) >= MIN_NIGHTS:
            _night_verdict(row, b, t, ref, within, int(m_of[t]), alpha, (val, ks, usable, zs, cus), rows,
                           min_loss, _run_var(s, t))
        # a night beyond the two-nights bound is out of the history of the nights after it, too:
        # the first night of a step must not widen the spread the second is judged by
        watched = bool(row.get("beyond2")) and np.isfinite(row["z"]) and row["z"] > row["b2"]
        usable[t] = bool(s.healthy[t]) and len(b) > 0 and row["status"] in ("ok", "blind", "new") and not watched
        rows.append(row)
    return rows


def _in_units(out: pd.DataFrame, s: Series) -> pd.DataFrame:
    """The table's values back in the variable's unit (a score's stay z), its change and loss."""
    return _units(out, s.sign or (sc.worse_sign(s.unit) if s.unit != SCORE_VAR else 0))


def _units(out: pd.DataFrame, sign: Any) -> pd.DataFrame:
    """``out``'s value, median, change and loss from its badness (``sign``: each row's worse sign,
    or one for all; 0: a score, in its own units)."""
    sign = np.broadcast_to(np.asarray(sign, dtype=float), (len(out),))
    has = sign != 0
    vb, mb = out["value_bad"].to_numpy(dtype=float), out["median_bad"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        value = np.where(has, np.exp(sign * vb), vb)
        median = np.where(has, np.exp(sign * mb), mb)
        # the change of the value itself (a latency +67 %, a bandwidth -5 %); ``loss`` in performance terms
        change = np.where(has, value / median - 1, value - median)
        loss = np.where(has, sc.shift_to_loss(vb - mb), np.nan)
    return out.assign(value=value, median=median, change=change, loss=loss)


def _run_var(s: Series, t: int) -> float:
    """The variance night ``t``'s value owes to its measurements' own declared errors (the session
    report's precision, statcore.run_variance over its k measurements); 0 where none is known."""
    if t >= len(s.run_se):
        return 0.0
    se = np.asarray(s.run_se[t], dtype=float)
    k = int(np.isfinite(np.asarray(s.nights[t], dtype=float)).sum())
    v = float(sc.run_variance(se[None, :], 1)[0]) if se.size else math.nan
    return v / max(k, 1) if math.isfinite(v) else 0.0


def _within(nights: list, ref: np.ndarray) -> float:
    """The within-night spread of the history's nights with several measurements (statcore.within)."""
    groups = [nights[i] for i in ref if np.isfinite(np.asarray(nights[i], dtype=float)).sum() >= 2]
    return sc.within(sc.pad(groups)).value if groups else math.nan


def _night_verdict(row: dict, b: np.ndarray, t: int, ref: np.ndarray, within: float, m: int, alpha: float,
                   state: tuple, rows: list, min_loss: float = 0.0, run_var: float = 0.0) -> None:
    """Night ``t``'s verdict against its history ``ref`` into ``row``: a confirmed step, two
    nights beyond the second bound, a suspect, or a CUSUM drift (``state``: the series' value,
    k, usable, z and CUSUM arrays, z and CUSUM filled in for night t).  ``run_var``: the variance
    tonight's value declares of its own (its measurements' precision), added to its standard error."""
    val, ks, usable, zs, cus = state
    med, se = _centre(val[ref], ks[ref], within, ks[t])
    se = math.sqrt(se ** 2 + run_var)
    z = (val[t] - med) / se
    b1, b2 = bounds(m, len(ref) - 1, alpha)
    zs[t] = z
    sees = sc.detectable_loss(se, b2)
    row.update(median_bad=med, se=se, z=z, b1=b1, b2=b2, sees=sees, status="ok" if sees < BLIND_LOSS else "blind")
    prev = t - 1
    row["confirm_z"] = _most_z(b, med, val[ref], ks[ref], within) if ks[t] >= 2 else np.nan
    row["tail"] = tail = _night_tail(val[t], val[ref])
    big = sc.shift_to_loss(val[t] - med) >= min_loss  # a practical floor: a smaller loss flags nothing
    one = tail <= max(alpha / 3, 1 / (len(ref) + 1))     # worse than every night of its history
    row["beyond2"] = tail <= max(math.sqrt(alpha / 3), 1 / (len(ref) + 1))
    two = (row["beyond2"] and prev >= 0 and bool(rows[prev].get("beyond2", False))
           and tail * float(rows[prev].get("tail", 1.0)) <= TWO_NIGHTS_TAIL)
    confirmed = ks[t] >= 2 and z > b1 and row["confirm_z"] > CONFIRM_Z and one and big
    if confirmed:
        row.update(status="FAIL", rule="step")
    elif z > b2 and two and big and prev >= 0 and np.isfinite(zs[prev]) and zs[prev] > _b2_of(rows[prev]):
        row.update(status="FAIL", rule="two nights")
    elif z > b1 and one and big:
        row.update(status="suspect", rule="step, one measurement" if ks[t] < 2 else "step, not confirmed")
    c, h = _cusum(val, ks, usable, t, within, m, alpha)
    cus[t] = c
    row.update(cusum=c, h=h)
    if row["status"] == "blind":
        row["rule"] = f"sees a loss of {sees:.0%} at best (two nights)"
    if row["status"] != "FAIL" and c > h and prev >= 0 and cus[prev] > rows[prev]["h"]:
        row.update(status="FAIL", rule="drift")


def _night_tail(value: float, history: np.ndarray) -> float:
    """The distribution-free tail of tonight's value among its history's night values: (the nights
    at least as bad, plus one) over (the nights, plus one); 1 / (N + 1) where it is worse than all."""
    h = np.asarray(history, dtype=float)
    h = h[np.isfinite(h)]
    return float((np.sum(h >= value) + 1) / (len(h) + 1))


def _most_z(b: np.ndarray, med: float, vals: np.ndarray, ks: np.ndarray, within: float) -> float:
    """The z of the night's measurement that most of them are at least as bad as (the
    ceil(k/2)-th best: for 2 both, for 5 three), against the standard error of one measurement."""
    _, se1 = _centre(vals, ks, within, 1)
    return float((np.sort(b)[math.ceil(len(b) / 2) - 1] - med) / se1)


def _b2_of(row: dict) -> float:
    return row["b2"] if np.isfinite(row["b2"]) else math.inf


def _centre(vals: np.ndarray, ks: np.ndarray, within: float, k_now: int) -> tuple[float, float]:
    """(centre, standard error of tonight's value about it) from the history's night values: their
    location, and their standard deviation split into its within part and the night-to-night part
    beyond it (not skipped: in a history of a few nights a skip takes real variation for outliers,
    and the nights a rule flagged are out of it already)."""
    centre = float(sc.location(vals))
    total = float(np.std(vals, ddof=1)) if len(vals) > 1 else 0.0
    n = max(1, len(vals))
    if math.isfinite(within):
        part = float(np.mean((sc.location_sd(ks) * within) ** 2))
        between2 = max(sc.FLOOR ** 2, total ** 2 - part)
        own = (sc.location_sd(int(k_now)) * max(within, sc.FLOOR)) ** 2 + between2
    else:  # no night with repeats: the whole spread is night to night (repeats do not help)
        own = max(total, sc.FLOOR) ** 2
    return centre, math.sqrt(own + max(total, sc.FLOOR) ** 2 / n)


def _cusum(val: np.ndarray, ks: np.ndarray, usable: np.ndarray, t: int, within: float, m: int,
           alpha: float) -> tuple[float, float]:
    """(S_t, h): the clipped one-sided CUSUM of the last CUSUM_NIGHTS nights up to ``t`` against the
    usable nights before them; (NaN, NaN) without CUSUM_MIN_REF of those."""
    start = max(0, t - CUSUM_NIGHTS + 1)
    ref = np.flatnonzero(usable[:start])[-WINDOW:]
    if len(ref) < CUSUM_MIN_REF:
        return float("nan"), float("nan")
    # the centre's own error, in standard errors of one night (_centre's centre part)
    k_eff = CUSUM_K + CUSUM_CENTRE_Z * math.sqrt(1 / len(ref))
    s, centres = 0.0, {}
    for i in range(start, t + 1):
        if not np.isfinite(val[i]):
            continue
        if ks[i] not in centres:
            centres[ks[i]] = _centre(val[ref], ks[ref], within, ks[i])
        med, se = centres[ks[i]]
        s = max(0.0, s + min((val[i] - med) / se, CUSUM_CLIP) - k_eff)
    return s, cusum_h(m, alpha)


def score_series(node_table: pd.DataFrame, m_of: Sequence[int], alpha: float = ALPHA_NIGHT) -> pd.DataFrame:
    """The node's score on its newest night (``node_table``: judge_series's rows of every variable of
    one node, with ``night``): the mean of its variables' z, each clipped at statcore.CLIP, against
    the scores its history's nights would have had (each history night's z against the other
    history nights: leave one out), so that it is judged from the sixth night on.  A FAIL (rule
    "step": its many variables confirm each other) where its z is above b1, it is above every
    history night's score, and the node's median loss tonight is at least SCORE_MIN_LOSS; one row
    (empty where fewer than 2 variables have a z tonight, or the history is short)."""
    t = int(node_table["night"].max())
    tonight = node_table[(node_table["night"] == t) & np.isfinite(node_table["z"].astype(float))]
    hist = _score_history(node_table, t)
    if len(tonight) < 2 or len(hist) < MIN_NIGHTS:
        return pd.DataFrame()
    score = float(np.mean(np.clip(tonight["z"].astype(float), -sc.CLIP, sc.CLIP)))
    values = np.array(list(hist.values()))
    centre = float(sc.location(values))
    sd = max(float(np.std(values, ddof=1)), 0.05)
    z = (score - centre) / (sd * math.sqrt(1 + 1 / len(values)))
    b1, b2 = bounds(int(m_of[t]), len(values) - 1, alpha)
    loss = float(np.nanmedian(tonight["loss"].astype(float)))
    fail = z > b1 and score > values.max() and loss >= SCORE_MIN_LOSS
    first = node_table[node_table["night"] == t].iloc[0]
    return pd.DataFrame([{"night": t, "time": first["time"], "session": first["session"], "current": first["current"],
                          "k": 1, "history": len(values), "healthy": bool(first["healthy"]),
                          "status": "FAIL" if fail else "ok", "rule": "step" if fail else "", "value_bad": score,
                          "median_bad": centre, "se": sd, "z": z, "b1": b1, "b2": b2, "value": score,
                          "median": centre, "change": score - centre, "loss": loss}])


def _score_history(node_table: pd.DataFrame, t: int) -> dict[int, float]:
    """{night: the score it would have had} of the node's usable nights before ``t``: per variable,
    each night's z against the other such nights (their location and standard deviation)."""
    usable = node_table[(node_table["night"] < t) & node_table["healthy"].astype(bool)
                        & node_table["status"].isin(["ok", "blind", "new"])]
    bad = set(node_table.loc[(node_table["night"] < t) & node_table["status"].isin(["FAIL", "suspect"]), "night"])
    usable = usable[~usable["night"].isin(bad)]
    zs: dict[int, list[float]] = {}
    if usable["night"].nunique() < MIN_NIGHTS:  # no variable has the nights: score_series judges nothing
        return {}
    u = usable.sort_values(["test", "var"], kind="stable")  # each variable's nights in their order
    test, var = u["test"].to_numpy(), u["var"].to_numpy()
    values, nights = u["value_bad"].to_numpy(dtype=float), u["night"].to_numpy(dtype=int)
    starts = np.flatnonzero(np.r_[True, (test[1:] != test[:-1]) | (var[1:] != var[:-1])])
    for i, j in zip(starts, np.r_[starts[1:], len(test)]):
        ok = ~np.isnan(values[i:j])
        v, nv = values[i:j][ok], nights[i:j][ok]
        n = len(v)
        if n < MIN_NIGHTS:
            continue
        others = np.broadcast_to(v, (n, n))[~np.eye(n, dtype=bool)].reshape(n, n - 1)  # row r: all but night r
        sd = np.maximum(np.std(others, axis=1, ddof=1), sc.FLOOR)
        z = (v - sc.location(others)) / (sd * math.sqrt(1 + 1 / (n - 1)))
        for night, zz in zip(nv, np.clip(z, -sc.CLIP, sc.CLIP)):
            zs.setdefault(int(night), []).append(float(zz))
    return {n: float(np.mean(z)) for n, z in sorted(zs.items()) if len(z) >= 2}


# --- from the report reader's tables to series, and back --------------------------------------

NODE_KEY = ["system", "partition", "node"]
VAR_KEY = NODE_KEY + ["test", "var"]


@dataclass
class Drift:
    """The nightly drift verdict: ``table`` one row per (node, variable, night), ``latest`` the
    newest night's rows, ``notes`` one line per thing left out, ``missing`` nights short of
    MIN_NIGHTS per node."""
    table: pd.DataFrame
    latest: pd.DataFrame
    notes: list
    #: False: no node had a night to judge against (first_nights): ``table`` holds the newest
    #: night's rows only, all "new"
    judged: bool = True

    @property
    def failed(self) -> pd.DataFrame:
        return self.latest[self.latest["status"] == "FAIL"]

    @property
    def suspects(self) -> pd.DataFrame:
        return self.latest[self.latest["status"] == "suspect"]


def _sign_or_note(unit: str, lower: Any, upper: Any, nkey: tuple, vkey: tuple, notes: list) -> int | None:
    """The variable's worse sign (statcore.worse_sign); None where its direction is unknown, said
    in ``notes``."""
    try:
        return sc.worse_sign(unit, lower, upper)
    except sc.UnknownDirection as exc:
        notes.append(f"{':'.join(map(str, nkey[:2]))} {nkey[2]} {vkey[0]} {vkey[1]}: not judged: {exc}")
        return None


def _variable_nights(nkey: tuple, vkey: tuple, cols: dict, healthy: np.ndarray, m_of: np.ndarray,
                     alpha: float, notes: list) -> list[dict[str, Any]] | None:
    """One variable's nights of one node judged (judge_series's rows, keyed, before _units; each
    with its worse sign as ``_sign``); None where its direction is unknown (a note says so).
    ``cols``: the variable's rows as arrays (night, value, time, session, current, rel_se, unit,
    lower, upper), in night order."""
    unit = str(cols["unit"][0])
    lower, upper = (cols[c][0] if c in cols else None for c in ("lower", "upper"))
    sign = _sign_or_note(unit, lower, upper, nkey, vkey, notes)
    if sign is None:
        return None
    s = Series(key=nkey + vkey, unit=unit, sign=sign)
    night = cols["night"]
    starts = np.flatnonzero(np.r_[True, night[1:] != night[:-1]])
    nights = [int(n) for n in night[starts]]
    for i, j in zip(starts, np.r_[starts[1:], len(night)]):
        s.nights.append(sc.badness(cols["value"][i:j], sign))
        s.times.append(float(cols["time"][i:j].min()))
        s.healthy.append(bool(healthy[night[i]]))
        s.sessions.append(str(cols["session"][i]))
        s.current.append(bool(cols["current"][i:j].any()))
        s.run_se.append(cols["rel_se"][i:j])
    rows = _judge_rows(s, [int(m_of[n]) for n in nights], alpha)
    keys = dict(zip(VAR_KEY, s.key))
    for row, n in zip(rows, nights):
        row.update(night=n, **keys, unit=unit, _sign=sign)
    return rows


def _columns(node_df: pd.DataFrame) -> dict:
    """The node's rows as arrays, by (test, var, night) in a stable order (the order of each night's
    measurements kept), for _variable_nights."""
    d = node_df.sort_values(["test", "var", "night"], kind="stable")
    n = len(d)
    cols = {"test": d["test"].to_numpy(), "var": d["var"].to_numpy(), "night": d["night"].to_numpy(dtype=int),
            "value": d["value"].to_numpy(dtype=float), "time": d["time"].to_numpy(dtype=float),
            "session": d["session"].to_numpy(), "unit": d["unit"].to_numpy(),
            "current": d["current"].to_numpy(dtype=bool) if "current" in d else np.ones(n, dtype=bool),
            "rel_se": pd.to_numeric(d["rel_se"], errors="coerce").to_numpy(dtype=float) if "rel_se" in d
            else np.full(n, np.nan)}
    for c in ("lower", "upper"):
        if c in d:
            cols[c] = d[c].to_numpy()
    return cols


#: the drift table's columns in order (judge_series's row, the variable's keys and unit)
TABLE_COLUMNS = ["night", "time", "session", "current", "k", "history", "healthy", "status", "rule", "value_bad",
                 "median_bad", "se", "z", "b1", "b2", "cusum", "h", "sees", "confirm_z", "tail", "beyond2",
                 "value", "median", "change", "loss"] + VAR_KEY + ["unit"]


def _node_table(nkey: tuple, node_df: pd.DataFrame, healthy: np.ndarray, m_of: np.ndarray, alpha: float,
                notes: list) -> pd.DataFrame:
    """Every variable of one node judged (_variable_nights), as one table in its units."""
    cols = _columns(node_df)
    test, var = cols["test"], cols["var"]
    starts = np.flatnonzero(np.r_[True, (test[1:] != test[:-1]) | (var[1:] != var[:-1])])
    rows: list = []
    for i, j in zip(starts, np.r_[starts[1:], len(test)]):
        part = _variable_nights(nkey, (test[i], var[i]), {k: v[i:j] for k, v in cols.items()}, healthy, m_of,
                                alpha, notes)
        rows += part or []
    if not rows:
        return pd.DataFrame()
    table = pd.DataFrame(rows)
    table = _units(table, table.pop("_sign").to_numpy(dtype=float))
    return table[[c for c in TABLE_COLUMNS if c in table]]


def measurements(perf: pd.DataFrame, cases: pd.DataFrame, since: pd.Timestamp | None = None,
                 night_gap_h: float = NIGHT_GAP_H) -> tuple[pd.DataFrame, list]:
    """The perf values of ``perf`` as nights: one row per measurement with its node, night number
    (per node), healthy flag, software and ``current`` (not a --history input); (rows, notes on
    what was left out)."""
    notes: list = []
    cols = VAR_KEY + ["unit", "value", "time", "session", "night", "healthy", "current"]
    if perf is None or perf.empty:
        return pd.DataFrame(columns=cols), notes
    df = perf.copy()
    if "dry_run" in cases:
        dry = set(cases.loc[cases["dry_run"].fillna(False).astype(bool), "session"].dropna())
        df = df[~df["session"].isin(dry)]
    df["node"] = df["node"].where(df["node"].notna(), df["nodes"]).fillna("?").astype(str)
    df = df[np.isfinite(pd.to_numeric(df["value"], errors="coerce")) & df["time"].notna()]
    df["session"] = df["session"].fillna(df["time"].round(0).astype(str))
    df["software"] = df["software"].astype(object).fillna("") if "software" in df else ""
    # a night of a node fails where any of its test cases failed
    cs = cases.copy()
    cs["node"] = cs["node"].where(cs["node"].notna(), cs["nodes"]).fillna("?").astype(str)
    cs["session"] = cs["session"].fillna(pd.to_numeric(cs["time"], errors="coerce").round(0).astype(str))
    bad = cs[~cs["result"].astype(str).isin(GOOD)].groupby(NODE_KEY + ["session"]).size().rename("failed")
    df = df.join(bad, on=NODE_KEY + ["session"])
    df["healthy"] = df["failed"].isna() & df["result"].astype(str).isin(GOOD)
    df = df.drop(columns="failed")
    df["current"] = ~df["history"].fillna(False).astype(bool) if "history" in df else True
    if since is not None:
        old = df["time"] < since.timestamp()
        if old.any():
            notes.append(f"{df.loc[old, 'session'].nunique()} sessions before --since {since:%Y-%m-%d %H:%M} UTC "
                         "left out of the history")
        df = df[~old]
    # sessions -> nights, per node
    out = []
    for key, node_df in df.groupby(NODE_KEY, sort=True):
        first = node_df.groupby("session")["time"].min().sort_values()
        night, last, ids = -1, -math.inf, {}
        for sess, t0 in first.items():
            if t0 - last > night_gap_h * 3600:
                night += 1
            ids[sess], last = night, t0
        node_df = node_df.assign(night=node_df["session"].map(ids))
        node_df = _after_software_change(node_df, key, notes)
        out.append(node_df)
    df = pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=cols)
    return df, notes


def _after_software_change(df: pd.DataFrame, key: tuple, notes: list) -> pd.DataFrame:
    """The nights since the node's software last changed (the newest night's software first seen)."""
    soft = df.groupby("night")["software"].agg(lambda s: sorted(set(s))[0] if len(s) else "").sort_index()
    soft = soft[soft != ""]  # a perflog line records none: it matches any
    if soft.nunique() <= 1:
        return df
    newest = soft.iloc[-1]
    changed = soft[soft != newest]
    cut = changed.index.max()
    notes.append(f"{':'.join(map(str, key[:2]))} {key[2]}: {int(cut) + 1} nights before a software "
                 f"change left out of its history ({soft.loc[cut]!r} -> {newest!r})")
    return df[df["night"] > cut].assign(night=lambda d: d["night"] - cut - 1)


def judge_nights(perf: pd.DataFrame, cases: pd.DataFrame, since: pd.Timestamp | None = None,
          night_gap_h: float = NIGHT_GAP_H, alpha: float = ALPHA_NIGHT) -> Drift:
    """Every night of every node and variable among the inputs judged against its history;
    DriftInputError where tonight is older than its history, or --since is after tonight."""
    _check_dates(perf, since)
    df, notes = measurements(perf, cases, since, night_gap_h)
    first = first_nights(df, notes)
    return first if first is not None else judge_measurements(df, notes, alpha)


def first_nights(df: pd.DataFrame, notes: list) -> Drift | None:
    """Where no node has a night before its newest (a batch of new nodes, no history): every
    variable "new", the verdict judge_measurements would give, without judging each variable's
    series one by one (minutes at 1,024 nodes); None where some node has history."""
    if df.empty or int(df["night"].max()) > 0:
        return None
    notes = list(notes)
    latest = df.drop_duplicates(VAR_KEY).reset_index(drop=True)
    known = [_sign_or_note(str(r["unit"]), r.get("lower"), r.get("upper"), tuple(r[k] for k in NODE_KEY),
                           (r["test"], r["var"]), notes) is not None for r in latest.to_dict("records")]
    latest = latest[known].assign(status="new", history=0).reset_index(drop=True)
    return Drift(latest, latest, notes, judged=False)


def _check_dates(perf: pd.DataFrame, since: pd.Timestamp | None) -> None:
    """DriftInputError where a node's session of this run is older than its history's newest
    session (a history from after tonight), or ``since`` is after this run's newest session."""
    if perf is None or perf.empty or "history" not in perf:
        return
    t = pd.to_numeric(perf["time"], errors="coerce")
    hist = perf["history"].fillna(False).astype(bool)
    now = perf[~hist & t.notna()]
    if now.empty:
        return
    tonight = float(pd.to_numeric(now["time"]).max())
    if since is not None and since.timestamp() > tonight:
        raise DriftInputError(f"--since {since:%Y-%m-%d %H:%M} UTC is after this run's newest session "
                              f"({pd.to_datetime(tonight, unit='s', utc=True):%Y-%m-%d %H:%M} UTC): no night of "
                              "it would be judged")
    node = perf["node"].where(perf["node"].notna(), perf["nodes"]).astype(str)
    newest = t[hist].groupby(node[hist]).max()
    oldest = t[~hist].groupby(node[~hist]).min()
    for n, first in oldest.items():
        if n in newest and newest[n] > first:
            raise DriftInputError(
                f"node {n}: this run's session ({pd.to_datetime(first, unit='s', utc=True):%Y-%m-%d %H:%M} UTC) is "
                f"older than a night of its history ({pd.to_datetime(newest[n], unit='s', utc=True):%Y-%m-%d %H:%M} "
                "UTC): give the history of nights before it")


def judge_measurements(df: pd.DataFrame, notes: list | None = None, alpha: float = ALPHA_NIGHT) -> Drift:
    """``judge`` of ``measurements``' rows: each variable's nights through ``judge_series``, then
    each node's score through ``score_series``."""
    notes = list(notes or [])
    parts = []
    for nkey, node_df in df.groupby(NODE_KEY, sort=True):
        n_nights = int(node_df["night"].max()) + 1
        if n_nights > MAX_NIGHTS:  # older nights judge nothing tonight (WINDOW, CUSUM_NIGHTS)
            node_df = node_df[node_df["night"] >= n_nights - MAX_NIGHTS]
            node_df = node_df.assign(night=node_df["night"] - (n_nights - MAX_NIGHTS))
            n_nights = MAX_NIGHTS
        m_of = node_df.drop_duplicates(["night", "test", "var"]).groupby("night").size() \
            .reindex(range(n_nights), fill_value=1) + 1  # the node's score is one more try
        healthy = node_df.groupby("night")["healthy"].all().reindex(range(n_nights), fill_value=False)
        table = _node_table(nkey, node_df, healthy.to_numpy(dtype=bool), m_of.to_numpy(dtype=int), alpha, notes)
        if not table.empty:
            parts.append(table)
            score = score_series(table, list(m_of), alpha)
            if not score.empty:
                parts.append(score.assign(**dict(zip(VAR_KEY, nkey + (SCORE_TEST, SCORE_VAR))), unit="z"))
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=VAR_KEY + ["status"])
    if table.empty:
        return Drift(table, table, notes)
    newest = table.groupby(NODE_KEY)["night"].transform("max")
    latest = table[(table["night"] == newest) & table["current"].astype(bool)].copy()
    if len(latest):
        judged = set(map(tuple, latest[NODE_KEY].drop_duplicates().to_numpy()))
        apart = table[~pd.MultiIndex.from_frame(table[NODE_KEY]).isin(list(judged))]
        if len(apart):
            said = ", ".join(f"{k[2]} {k[0]}:{k[1]} ({g['night'].nunique()} nights)"
                             for k, g in list(apart.groupby(NODE_KEY))[:5])
            more = apart[NODE_KEY].drop_duplicates().shape[0] - 5
            notes.append("history of nodes, systems or partitions not in this run kept apart (judges nothing "
                         f"here): {said}" + (f" and {more} more" if more > 0 else ""))
    order = {s: i for i, s in enumerate(STATUSES)}
    latest = latest.assign(_o=latest["status"].map(order)).sort_values(["_o"] + VAR_KEY).drop(columns="_o")
    return Drift(table, latest.reset_index(drop=True), notes)


def parse_options(since: str | None, night_gap_h: float | None) -> tuple[pd.Timestamp | None, float]:
    """``--since`` and ``--night-gap`` checked: (timestamp or None, hours); ValueError with the reason."""
    when = None
    if since is not None:
        when = pd.to_datetime(since, utc=True, errors="coerce")
        if pd.isna(when):
            raise ValueError(f"--since {since!r}: not a date (e.g. 2026-12-01 or 2026-12-01T06:00)")
    from ..constants import NIGHT_GAP_MAX_H
    gap = NIGHT_GAP_H if night_gap_h is None else float(night_gap_h)
    if not (math.isfinite(gap) and gap >= 0):
        raise ValueError(f"--night-gap {night_gap_h}: must be a number of hours >= 0")
    if gap > NIGHT_GAP_MAX_H:
        raise ValueError(f"--night-gap {night_gap_h}: must be at most {NIGHT_GAP_MAX_H} hours (a year)")
    return when, gap
