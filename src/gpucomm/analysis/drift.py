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

* the node's **score** (``score_night``): tonight the mean of its variables' z (each clipped at
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
    cols = _judge_batch(_nights_of([s], [m_of], [min_loss]), alpha)
    return _in_units(pd.DataFrame({k: v[0] for k, v in cols.items()}), s)


@dataclass
class Nights:
    """Series of as many nights each, as (series, night[, measurement]) arrays: ``bad`` each
    night's badness (finite values first, NaN padded), ``run_var`` the variance its value owes to
    its measurements' own declared errors, ``m`` the node's tries that night, ``healthy``, the
    night's ``time``, ``session`` and ``current``; ``floor`` each series' practical loss floor."""
    bad: np.ndarray
    run_var: np.ndarray
    m: np.ndarray
    healthy: np.ndarray
    time: np.ndarray
    session: np.ndarray
    current: np.ndarray
    floor: np.ndarray


def _nights_of(series: list[Series], m_of: list[Sequence[int]],
               min_loss: Sequence[float | None] | None = None) -> Nights:
    """Series of as many nights each as Nights (min_loss None: statcore.MIN_LOSS of its kind)."""
    S, N = len(series), len(series[0].nights)
    finite = [np.asarray(b, dtype=float).ravel() for s in series for b in s.nights]
    bad = sc.pad([b[np.isfinite(b)] for b in finite]).reshape(S, N, -1)  # each night's values first
    ks = np.isfinite(bad).sum(axis=-1)
    rs = sc.pad([s.run_se[t] if t < len(s.run_se) else [] for s in series for t in range(N)]).reshape(S, N, -1)
    return Nights(bad=bad, run_var=_run_vars(rs, ks),
                  m=np.asarray([list(m) for m in m_of], dtype=int).reshape(S, N),
                  healthy=np.asarray([s.healthy for s in series], dtype=bool).reshape(S, N),
                  time=np.asarray([s.times for s in series], dtype=float).reshape(S, N),
                  session=np.asarray([[str(x) for x in s.sessions] for s in series], dtype=object).reshape(S, N),
                  current=np.asarray([[bool(c) for c in s.current] if s.current else np.arange(N) == N - 1
                                      for s in series], dtype=bool).reshape(S, N),
                  floor=np.array([(sc.min_loss(s.unit, s.sign) if s.sign else 0.0) if ml is None else ml
                                  for s, ml in zip(series, min_loss or [None] * S)], dtype=float))


def _judge_batch(a: Nights, alpha: float = ALPHA_NIGHT) -> dict[str, np.ndarray]:
    """judge_series of series of as many nights each, night by night for all of them at once:
    {column: (series, night) array} (TABLE_COLUMNS up to ``sees``, and confirm_z, tail and beyond2
    where a night was judged; "night" the night's index)."""
    B, M, healthy, run_var, floor = a.bad, a.m, a.healthy, a.run_var, a.floor
    S, N = B.shape[:2]
    ks = np.isfinite(B).sum(axis=-1)
    nan = np.full((S, N), np.nan)
    val, med, se, zs, b1, b2, cus, h, sees = (nan.copy() for _ in range(9))
    conf, tail = nan.copy(), nan.copy()
    beyond2 = np.zeros((S, N), dtype=bool)
    judged = np.zeros((S, N), dtype=bool)
    usable = np.zeros((S, N), dtype=bool)
    history = np.zeros((S, N), dtype=int)
    status = np.full((S, N), "new", dtype=object)
    rule = np.full((S, N), "", dtype=object)
    for t in range(N):
        ref = _last_usable(usable[:, :t], WINDOW)
        history[:, t] = ref.sum(axis=1)
        within = _within_of(B[:, :t], ks[:, :t], ref)
        bt, has = B[:, t], ks[:, t] > 0
        known = np.isfinite(within)
        val[:, t] = np.where(has, np.where(known, sc.location(bt, np.where(known, within, 1.0)), sc.location(bt)),
                             np.nan)
        J = np.flatnonzero(has & (history[:, t] >= MIN_NIGHTS))
        if len(J):
            _verdicts(t, J, B, ks, val, ref[J], within[J], M[J, t], run_var[J, t], floor[J], alpha, usable,
                      (med, se, zs, b1, b2, cus, h, sees, conf, tail, beyond2, status, rule))
            judged[J, t] = True
        # a night beyond the two-nights bound is out of the history of the nights after it, too:
        # the first night of a step must not widen the spread the second is judged by
        watched = beyond2[:, t] & np.isfinite(zs[:, t]) & (zs[:, t] > b2[:, t])
        usable[:, t] = healthy[:, t] & has & np.isin(status[:, t], ("ok", "blind", "new")) & ~watched
    out = {"night": np.broadcast_to(np.arange(N), (S, N)), "time": a.time, "session": a.session,
           "current": a.current, "k": ks, "history": history, "healthy": healthy, "status": status, "rule": rule,
           "value_bad": val, "median_bad": med, "se": se, "z": zs, "b1": b1, "b2": b2, "cusum": cus, "h": h,
           "sees": sees}
    if judged.any():
        flag = beyond2.astype(object)
        flag[~judged] = np.nan
        out.update(confirm_z=conf, tail=tail, beyond2=flag)
    return out


def _last_usable(usable: np.ndarray, window: int) -> np.ndarray:
    """Each row's last ``window`` usable nights (a mask)."""
    right = np.cumsum(usable[:, ::-1], axis=1)[:, ::-1]
    return usable & (right <= window)


def _run_vars(run_se: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """The variance each night's value owes to its measurements' own declared errors (``run_se``:
    (series, night, measurement), the session report's precision; statcore.run_variance over
    them, divided by the night's k); 0 where none is known.  (series, night)."""
    S, N = ks.shape
    v = sc.run_variance(run_se.reshape(S * N, -1), S * N).reshape(S, N)
    return np.where(np.isfinite(v), v / np.maximum(ks, 1), 0.0)


def _within(nights: list, ref: np.ndarray) -> float:
    """The within-night spread of the history's nights with several measurements (statcore.within)."""
    groups = [nights[i] for i in ref if np.isfinite(np.asarray(nights[i], dtype=float)).sum() >= 2]
    return sc.within(sc.pad(groups)).value if groups else math.nan


def _within_of(B: np.ndarray, ks: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """_within of each row's history (``ref`` of its nights ``B``: (rows, nights, measurements)),
    all rows at once; NaN where no night of it has 2 measurements."""
    groups = ref & (ks >= 2)
    some = groups.any(axis=1)
    if not some.any():
        return np.full(len(B), np.nan)
    value, _ = sc.within_arrays(np.where(groups[..., None], B, np.nan))
    return np.where(some, value, np.nan)


def _verdicts(t: int, J: np.ndarray, B: np.ndarray, ks: np.ndarray, val: np.ndarray, ref: np.ndarray,
              within: np.ndarray, m: np.ndarray, run_var: np.ndarray, floor: np.ndarray, alpha: float,
              usable: np.ndarray, cols: tuple) -> None:
    """Night ``t``'s verdict of the rows ``J`` against their histories ``ref``: a confirmed step,
    two nights beyond the second bound, a suspect, or a CUSUM drift, into ``cols`` (median, se, z,
    b1, b2, CUSUM, h, sees, confirm z, tail, beyond2, status, rule: (series, night) arrays).
    ``run_var``: the variance tonight's value declares of its own, added to its standard error."""
    med, se, zs, b1, b2, cus, h, sees, conf, tail, beyond2, status, rule = cols
    x = _night_stats(t, J, B, ks, val, ref, within, m, run_var, floor, alpha)
    st, ru = _step_rules(t, J, x, (zs, b2, tail, beyond2))
    c = np.full(len(J), np.nan)
    hh = np.full(len(J), np.nan)
    start = max(0, t - CUSUM_NIGHTS + 1)
    for i in np.flatnonzero(usable[J, :start].sum(axis=1) >= CUSUM_MIN_REF):  # the CUSUM needs its history
        c[i], hh[i] = _cusum(val[J[i]], ks[J[i]], usable[J[i]], t, float(within[i]), int(m[i]), alpha)
    blind = st == "blind"
    ru[blind] = [f"sees a loss of {loss:.0%} at best (two nights)" for loss in x["sees"][blind]]
    if t >= 1:
        drift = (st != "FAIL") & (c > hh) & (cus[J, t - 1] > h[J, t - 1])
        st[drift], ru[drift] = "FAIL", "drift"
    for arr, v in ((med, x["centre"]), (se, x["se"]), (zs, x["z"]), (b1, x["b1"]), (b2, x["b2"]), (cus, c),
                   (h, hh), (sees, x["sees"]), (conf, x["confirm_z"]), (tail, x["tail"]), (beyond2, x["far"]),
                   (status, st), (rule, ru)):
        arr[J, t] = v


def _night_stats(t: int, J: np.ndarray, B: np.ndarray, ks: np.ndarray, val: np.ndarray, ref: np.ndarray,
                 within: np.ndarray, m: np.ndarray, run_var: np.ndarray, floor: np.ndarray,
                 alpha: float) -> dict[str, np.ndarray]:
    """What _verdicts' rules read of night ``t`` of the rows ``J``: its history's centre, its
    standard error and z, the bounds, the loss it sees, the confirming z, its tail, and whether it
    is big (the practical floor), worse than every night of its history (one), beyond the second
    bound's tail (far)."""
    hist = np.where(ref, val[J, :t], np.nan)
    centre, se0, se1, n = _centre(hist, ks[J, :t], within, ks[J, t])
    v = val[J, t]
    se = np.sqrt(se0 ** 2 + run_var)
    bb = np.array([bounds(int(mm), int(nn) - 1, alpha) for mm, nn in zip(m, n)]).reshape(len(J), 2)
    # the z of the night's measurement that most of them are at least as bad as (the ceil(k/2)-th
    # best: for 2 both, for 5 three), against the standard error of one measurement
    k_now = ks[J, t]
    worst = np.take_along_axis(np.sort(B[J, t], axis=-1), np.maximum((k_now + 1) // 2 - 1, 0)[:, None], axis=-1)
    # the distribution-free tail of tonight's value among its history's: (the nights at least as
    # bad, plus one) over (the nights, plus one)
    tl = ((hist >= v[:, None]).sum(axis=1) + 1) / (n + 1)
    return {"centre": centre, "se": se, "z": (v - centre) / se, "b1": bb[:, 0], "b2": bb[:, 1],
            "sees": sc.detectable_loss(se, bb[:, 1]), "k": k_now,
            "confirm_z": np.where(k_now >= 2, (worst[:, 0] - centre) / se1, np.nan), "tail": tl,
            "big": sc.shift_to_loss(v - centre) >= floor,  # a practical floor: a smaller loss flags nothing
            "one": tl <= np.maximum(alpha / 3, 1 / (n + 1)),  # worse than every night of its history
            "far": tl <= np.maximum(math.sqrt(alpha / 3), 1 / (n + 1))}


def _step_rules(t: int, J: np.ndarray, x: dict, before: tuple) -> tuple[np.ndarray, np.ndarray]:
    """(status, rule) of night ``t`` of the rows ``J`` from its _night_stats ``x`` and the night
    before (``before``: the z, b2, tail and beyond2 arrays): a confirmed step, two nights beyond the
    second bound, a suspect; else ok, or blind where it cannot see BLIND_LOSS."""
    zs, b2, tail, beyond2 = before
    z, a1, a2, big, one, k_now = x["z"], x["b1"], x["b2"], x["big"], x["one"], x["k"]
    st = np.where(x["sees"] < BLIND_LOSS, "ok", "blind").astype(object)
    ru = np.full(len(J), "", dtype=object)
    two_fail = np.zeros(len(J), dtype=bool)
    if t >= 1:
        p = t - 1
        prev_tail = np.where(np.isfinite(tail[J, p]), tail[J, p], 1.0)
        two = x["far"] & beyond2[J, p] & (x["tail"] * prev_tail <= TWO_NIGHTS_TAIL)
        prev_b2 = np.where(np.isfinite(b2[J, p]), b2[J, p], np.inf)
        two_fail = (z > a2) & two & big & np.isfinite(zs[J, p]) & (zs[J, p] > prev_b2)
    confirmed = (k_now >= 2) & (z > a1) & (x["confirm_z"] > CONFIRM_Z) & one & big
    suspect = ~confirmed & ~two_fail & (z > a1) & one & big
    st[confirmed], ru[confirmed] = "FAIL", "step"
    st[~confirmed & two_fail], ru[~confirmed & two_fail] = "FAIL", "two nights"
    st[suspect] = "suspect"
    ru[suspect] = np.where(k_now[suspect] < 2, "step, one measurement", "step, not confirmed")
    return st, ru


def _centre(vals: np.ndarray, ks: np.ndarray, within: np.ndarray, k_now: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per row of the history's night values ``vals`` (NaN: not in it) and their measurement
    counts ``ks``: (centre, standard error of tonight's value about it with ``k_now``
    measurements, the same for one measurement, the history's nights): their location, and their
    standard deviation split into its within part and the night-to-night part beyond it (not
    skipped: in a history of a few nights a skip takes real variation for outliers, and the nights
    a rule flagged are out of it already)."""
    inside = np.isfinite(vals)
    n = inside.sum(axis=1)
    centre = np.asarray(sc.location(vals), dtype=float).reshape(len(vals))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(inside, vals, 0.0).sum(axis=1) / np.maximum(n, 1)
        dev = np.where(inside, vals - mean[:, None], 0.0)
        total = np.where(n > 1, np.sqrt((dev ** 2).sum(axis=1) / np.maximum(n - 1, 1)), 0.0)
        w = np.asarray(within, dtype=float)
        lsd = sc.location_sd(np.where(inside, ks, 1))
        part = np.where(inside, (lsd * w[:, None]) ** 2, 0.0).sum(axis=1) / np.maximum(n, 1)
    between2 = np.maximum(sc.FLOOR ** 2, total ** 2 - part)
    known = np.isfinite(w)
    wf = np.maximum(np.where(known, w, 0.0), sc.FLOOR)
    # no night with repeats: the whole spread is night to night (repeats do not help)
    spread2 = np.maximum(total, sc.FLOOR) ** 2
    own = np.where(known, (sc.location_sd(np.asarray(k_now)) * wf) ** 2 + between2, spread2)
    own1 = np.where(known, wf ** 2 + between2, spread2)
    nn = np.maximum(1, n)
    return centre, np.sqrt(own + spread2 / nn), np.sqrt(own1 + spread2 / nn), n


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
    nights = [i for i in range(start, t + 1) if np.isfinite(val[i])]
    hist = np.broadcast_to(val[ref], (len(nights), len(ref)))
    med, se, _, _ = _centre(hist, np.broadcast_to(ks[ref], hist.shape), np.full(len(nights), within),
                            ks[nights])
    s = 0.0
    for i, c, e in zip(nights, med, se):
        s = max(0.0, s + min((val[i] - c) / e, CUSUM_CLIP) - k_eff)
    return s, cusum_h(m, alpha)


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


def score_night(node: dict, hist: dict[int, float], alpha: float = ALPHA_NIGHT) -> dict | None:
    """The node's score on its newest night (``node``: the judged rows of every variable of one
    node as arrays: night, z, loss, time, session, current, healthy, m (the node's tries that
    night); ``hist``: _score_histories' of the node): the mean of its variables' z, each clipped at
    statcore.CLIP, against the scores its history's nights would have had (each history night's z
    against the other history nights: leave one out), so that it is judged from the sixth night
    on.  A FAIL (rule "step": its many variables confirm each other) where its z is above b1, it is
    above every history night's score, and the node's median loss tonight is at least
    SCORE_MIN_LOSS; one row (None where fewer than 2 variables have a z tonight, or the history is
    short)."""
    night, z_all = node["night"], node["z"].astype(float)
    t = int(night.max())
    tonight = (night == t) & np.isfinite(z_all)
    if tonight.sum() < 2 or len(hist) < MIN_NIGHTS:
        return None
    score = float(np.mean(np.clip(z_all[tonight], -sc.CLIP, sc.CLIP)))
    values = np.array(list(hist.values()))
    centre = float(sc.location(values))
    sd = max(float(np.std(values, ddof=1)), 0.05)
    z = (score - centre) / (sd * math.sqrt(1 + 1 / len(values)))
    first = int(np.flatnonzero(night == t)[0])
    b1, b2 = bounds(int(node["m"][first]), len(values) - 1, alpha)
    loss = float(np.nanmedian(node["loss"].astype(float)[tonight]))
    fail = z > b1 and score > values.max() and loss >= SCORE_MIN_LOSS
    return {"night": t, "time": node["time"][first], "session": node["session"][first],
            "current": node["current"][first], "k": 1, "history": len(values), "healthy": bool(node["healthy"][first]),
            "status": "FAIL" if fail else "ok", "rule": "step" if fail else "", "value_bad": score,
            "median_bad": centre, "se": sd, "z": z, "b1": b1, "b2": b2, "value": score,
            "median": centre, "change": score - centre, "loss": loss}


def _score_histories(rows: dict, node: np.ndarray, n_nodes: int) -> list[dict[int, float]]:
    """Per node, {night: the score it would have had} of its usable nights before its newest
    (``rows``: every node's judged rows as arrays, series, night, status, healthy, value_bad,
    each series' rows together in night order; ``node``: each row's node): per variable, each
    night's z against the other such nights (their location and standard deviation), every
    variable of every node at once."""
    night, status = rows["night"].astype(int), rows["status"]
    newest = np.full(n_nodes, -1)
    np.maximum.at(newest, node, night)
    key = node.astype(np.int64) * (int(night.max()) + 1) + night
    before = night < newest[node]
    bad = np.isin(key, key[before & np.isin(status, ("FAIL", "suspect"))])
    use = before & rows["healthy"].astype(bool) & np.isin(status, ("ok", "blind", "new")) & ~bad
    nights_of = np.bincount(np.unique(key[use]) // (int(night.max()) + 1), minlength=n_nodes)
    use &= nights_of[node] >= MIN_NIGHTS  # no variable has the nights: the score judges nothing
    values = rows["value_bad"].astype(float)
    use &= ~np.isnan(values)
    at = np.flatnonzero(use)
    series = rows["series"][at]
    starts = np.flatnonzero(np.r_[True, series[1:] != series[:-1]])
    length = np.diff(np.r_[starts, len(at)])
    z = np.full(len(at), np.nan)
    for n in np.unique(length[length >= MIN_NIGHTS]):
        idx = starts[length == n][:, None] + np.arange(n)  # (series, night) positions in ``at``
        v = values[at[idx]]
        others = np.broadcast_to(v[:, None, :], (len(v), n, n))[:, ~np.eye(n, dtype=bool)].reshape(len(v), n, n - 1)
        sd = np.maximum(np.std(others, axis=-1, ddof=1), sc.FLOOR)
        z[idx] = np.clip((v - sc.location(others)) / (sd * math.sqrt(1 + 1 / (n - 1))), -sc.CLIP, sc.CLIP)
    got = np.isfinite(z)
    at, z = at[got], z[got]
    out: list[dict[int, float]] = [{} for _ in range(n_nodes)]
    if not len(at):
        return out
    order = np.lexsort((night[at], node[at]))  # by node, night; each night's variables in series order
    at, z = at[order], z[order]
    k = key[at]
    first = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    count = np.diff(np.r_[first, len(k)])
    mean = np.add.reduceat(z, first) / count
    for i, c, m in zip(at[first], count, mean):
        if c >= 2:
            out[int(node[i])][int(night[i])] = float(m)
    return out


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


#: the drift table's columns in order (judge_series's row, the variable's keys and unit)
TABLE_COLUMNS = ["night", "time", "session", "current", "k", "history", "healthy", "status", "rule", "value_bad",
                 "median_bad", "se", "z", "b1", "b2", "cusum", "h", "sees", "confirm_z", "tail", "beyond2",
                 "value", "median", "change", "loss"] + VAR_KEY + ["unit"]


def _where(df: pd.DataFrame, keep: pd.Series) -> pd.DataFrame:
    """The rows of ``df`` that ``keep``: ``df`` itself where that is all of them (no copy of 1.2 million rows)."""
    return df if keep.all() else df[keep]


def _series_table(df: pd.DataFrame, notes: list) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``measurements``' rows (nights numbered per node) as series: (the rows sorted by node,
    variable and night, the measurements of a night in their order, each with its series ``sid``
    and its night's node-wide ``m`` and ``healthy``; one row per series: keys, unit, sign),
    the series whose direction is unknown left out (a note says so)."""
    d = _where(df, df[NODE_KEY].notna().all(axis=1))
    nights = d.groupby(NODE_KEY)["night"].transform("max") + 1
    old = (nights - MAX_NIGHTS).clip(lower=0)  # older nights judge nothing tonight (WINDOW, CUSUM_NIGHTS)
    if old.any():
        d = d[d["night"] >= old].assign(night=lambda x: x["night"] - old.loc[x.index])
    per_night = d.drop_duplicates(NODE_KEY + ["night", "test", "var"]).groupby(NODE_KEY + ["night"]).size()
    d = d.join((per_night + 1).rename("m"), on=NODE_KEY + ["night"])  # the node's score is one more try
    d = d.assign(healthy=d.groupby(NODE_KEY + ["night"])["healthy"].transform("all"))
    d = d.sort_values(VAR_KEY + ["night"], kind="stable", ignore_index=True)
    d["sid"] = d.groupby(VAR_KEY, sort=False).ngroup()
    first = d.drop_duplicates("sid")
    signs = [_sign_or_note(str(r["unit"]), r.get("lower"), r.get("upper"), tuple(r[k] for k in NODE_KEY),
                           (r["test"], r["var"]), notes) for r in first.to_dict("records")]
    info = first[VAR_KEY + ["sid"]].assign(unit=first["unit"].astype(str).to_numpy(),
                                           sign=[0 if x is None else x for x in signs])
    info = info[info["sign"] != 0].reset_index(drop=True)
    return d[d["sid"].isin(info["sid"])], info


def _night_groups(d: pd.DataFrame, info: pd.DataFrame) -> dict[str, np.ndarray]:
    """_series_table's rows located: each row's series (its row in ``info``), badness, night of
    its series (``group``), place in that night (``at``; ``fin_at`` among the night's finite
    values); each such night's first row (``start``), series (``g_srow``), index in its series
    (``g_t``), time, session, current, m and healthy; each series' number of nights."""
    sid = d["sid"].to_numpy()
    srow = pd.Series(np.arange(len(info)), index=info["sid"].to_numpy()).loc[sid].to_numpy()
    bad = sc.badness(d["value"].to_numpy(dtype=float), 1) * info["sign"].to_numpy(dtype=float)[srow]
    night = d["night"].to_numpy(dtype=int)
    start = np.flatnonzero(np.r_[True, (sid[1:] != sid[:-1]) | (night[1:] != night[:-1])])
    group = np.cumsum(np.isin(np.arange(len(d)), start)) - 1
    fin = np.isfinite(bad)
    g_srow = srow[start]
    new_series = np.r_[True, g_srow[1:] != g_srow[:-1]]
    cur = d["current"].to_numpy(dtype=bool) if "current" in d else np.ones(len(d), dtype=bool)
    return {"srow": srow, "bad": bad, "fin": fin, "group": group, "start": start,
            "at": np.arange(len(d)) - start[group],
            "fin_at": np.cumsum(fin) - 1 - np.r_[0, np.cumsum(fin)][start][group],
            "rel_se": pd.to_numeric(d["rel_se"], errors="coerce").to_numpy(dtype=float) if "rel_se" in d
            else np.full(len(d), np.nan),
            "g_srow": g_srow, "g_t": np.arange(len(start)) - np.flatnonzero(new_series)[np.cumsum(new_series) - 1],
            "night": night[start], "time": np.minimum.reduceat(d["time"].to_numpy(dtype=float), start),
            "session": d["session"].astype(str).to_numpy(dtype=object)[start],
            "current": np.logical_or.reduceat(cur, start), "m": d["m"].to_numpy(dtype=int)[start],
            "healthy": d["healthy"].to_numpy(dtype=bool)[start],
            "length": np.bincount(g_srow, minlength=len(info))}


def _nights_by_length(d: pd.DataFrame, info: pd.DataFrame) -> list[tuple[np.ndarray, np.ndarray, Nights]]:
    """_series_table's series, those of as many nights together: (their rows in ``info``, their
    nights' numbers (series, night), Nights)."""
    g = _night_groups(d, info)
    K = max(1, int(np.bincount(g["group"], weights=g["fin"]).max()))
    KR = max(1, int(g["at"].max()) + 1)
    out = []
    for n in np.unique(g["length"][g["length"] > 0]):
        rows = np.flatnonzero(g["length"] == n)
        pos = np.full(len(info), -1)
        pos[rows] = np.arange(len(rows))
        S = len(rows)
        gsel = pos[g["g_srow"]] >= 0
        gi, gt = pos[g["g_srow"][gsel]], g["g_t"][gsel]
        rsel = pos[g["srow"]] >= 0
        ri, rt = pos[g["srow"][rsel]], g["g_t"][g["group"][rsel]]
        B = np.full((S, n, K), np.nan)
        f = g["fin"][rsel]
        B[ri[f], rt[f], g["fin_at"][rsel][f]] = g["bad"][rsel][f]
        rs = np.full((S, n, KR), np.nan)
        rs[ri, rt, g["at"][rsel]] = g["rel_se"][rsel]
        grid = {}
        for name, fill, dtype in (("night", -1, int), ("m", 1, int), ("healthy", False, bool),
                                  ("time", np.nan, float), ("session", "", object), ("current", False, bool)):
            grid[name] = np.full((S, n), fill, dtype=dtype)
            grid[name][gi, gt] = g[name][gsel]
        units, signs = info["unit"].to_numpy()[rows], info["sign"].to_numpy()[rows]
        out.append((rows, grid["night"], Nights(
            bad=B, run_var=_run_vars(rs, np.isfinite(B).sum(axis=-1)), m=grid["m"], healthy=grid["healthy"],
            time=grid["time"], session=grid["session"], current=grid["current"],
            floor=np.array([sc.min_loss(u, int(sg)) for u, sg in zip(units, signs)], dtype=float))))
    return out


def _judge_all(d: pd.DataFrame, info: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Every series of _series_table judged (_judge_batch, those of as many nights at once): one
    table in units, keyed, each series' rows together in night order (``_ord``: its row in
    ``info``, in node and variable order)."""
    blocks = []
    for rows, nights_no, a in _nights_by_length(d, info):
        n = nights_no.shape[1]
        cols = _judge_batch(a, alpha)
        block = _units(pd.DataFrame({k: np.asarray(v).reshape(-1) for k, v in cols.items()}),
                       np.repeat(info["sign"].to_numpy(dtype=float)[rows], n))
        keys = {c: np.repeat(info[c].to_numpy(dtype=object)[rows], n) for c in VAR_KEY}
        blocks.append(block.assign(night=nights_no.reshape(-1), m=a.m.reshape(-1), **keys,
                                   unit=np.repeat(info["unit"].to_numpy(dtype=object)[rows], n),
                                   _ord=np.repeat(rows.astype(float), n)))
    return pd.concat(blocks, ignore_index=True).sort_values("_ord", kind="stable", ignore_index=True)


#: the perf frame's columns the drift reads (keys, value, time, session, software, result, whether
#: history, within-run noise, and the bounds that give a unit of no known direction its sign)
MEASURED_COLUMNS = VAR_KEY + ["nodes", "unit", "value", "time", "session", "software", "result", "history",
                              "rel_se", "lower", "upper"]


def measurements(perf: pd.DataFrame, cases: pd.DataFrame, since: pd.Timestamp | None = None,
                 night_gap_h: float = NIGHT_GAP_H) -> tuple[pd.DataFrame, list]:
    """The perf values of ``perf`` as nights: one row per measurement with its node, night number
    (per node), healthy flag, software and ``current`` (not a --history input); (rows, notes on
    what was left out)."""
    notes: list = []
    cols = VAR_KEY + ["unit", "value", "time", "session", "night", "healthy", "current"]
    if perf is None or perf.empty:
        return pd.DataFrame(columns=cols), notes
    df = perf[[c for c in perf.columns if c in MEASURED_COLUMNS]].copy()  # (a week at 1,024 nodes: 1.2 M rows)
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
    df = df[df[NODE_KEY].notna().all(axis=1)]
    if df.empty:
        return pd.DataFrame(columns=cols), notes
    df = df.sort_values(NODE_KEY, kind="stable", ignore_index=True).join(_nights_of_sessions(df, night_gap_h),
                                                                         on=NODE_KEY + ["session"])
    soft = df[df["software"] != ""].groupby(NODE_KEY + ["night"])["software"].min()  # a night's first, sorted
    changed = soft.groupby(level=list(range(len(NODE_KEY)))).nunique()
    changed = changed[changed > 1]
    if len(changed):  # the nights before a node's software changed are left out (one node at a time: rare)
        keys = pd.MultiIndex.from_frame(df[NODE_KEY])
        parts = [df[~keys.isin(changed.index)]]
        for key in changed.index:
            parts.append(_after_software_change(df[keys == key], key, notes))
        df = pd.concat(parts).sort_index(kind="stable").reset_index(drop=True)
    return df, notes


def _nights_of_sessions(df: pd.DataFrame, night_gap_h: float) -> pd.Series:
    """Each (node, session)'s night number on its node: sessions in the order of their first
    time, a new night where one starts more than ``night_gap_h`` hours after the one before."""
    first = df.groupby(NODE_KEY + ["session"])["time"].min().reset_index() \
        .sort_values(NODE_KEY + ["time"], kind="stable", ignore_index=True)
    keys = first[NODE_KEY].to_numpy(dtype=object)
    node_starts = np.r_[True, (keys[1:] != keys[:-1]).any(axis=1)]
    new = node_starts | (np.r_[np.inf, np.diff(first["time"].to_numpy(dtype=float))] > night_gap_h * 3600)
    count = np.cumsum(new)
    night = count - count[node_starts][np.cumsum(node_starts) - 1]
    return pd.Series(night, index=pd.MultiIndex.from_frame(first[NODE_KEY + ["session"]]), name="night")


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
    if first is not None:
        return first
    rows = [df]
    del df  # _judge_rows lets it go once its series are drawn (a week of 1,024-node nights: 0.2 GB)
    return _judge_rows(rows, list(notes), alpha)


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
    now = t[~hist & t.notna()]
    if now.empty:
        return
    tonight = float(now.max())
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


def _with_scores(table: pd.DataFrame, info: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """``table`` (_judge_all's) with each node's score (score_night) after its variables' rows
    (``info``: _series_table's series, in node order)."""
    order = table["_ord"].to_numpy()
    arrays = {c: table[c].to_numpy() for c in ("night", "z", "loss", "value_bad", "status", "healthy", "time",
                                               "session", "current", "m")}
    arrays["series"] = order
    keys = info[NODE_KEY].to_numpy(dtype=object)
    edges = np.r_[np.flatnonzero(np.r_[True, (keys[1:] != keys[:-1]).any(axis=1)]), len(info)]
    node_of_series = np.repeat(np.arange(len(edges) - 1), np.diff(edges))
    hists = _score_histories(arrays, node_of_series[order.astype(int)], len(edges) - 1)
    scores = []
    for i, (first, last) in enumerate(zip(edges[:-1], edges[1:])):
        lo, hi = np.searchsorted(order, [first, last])
        row = score_night({c: v[lo:hi] for c, v in arrays.items()}, hists[i], alpha) if hi > lo else None
        if row is not None:
            nkey = tuple(keys[first])
            scores.append({**row, **dict(zip(VAR_KEY, nkey + (SCORE_TEST, SCORE_VAR))), "unit": "z",
                           "_ord": last - 0.5})
    if scores:
        table = pd.concat([table, pd.DataFrame(scores)], ignore_index=True).sort_values("_ord", kind="stable",
                                                                                        ignore_index=True)
    return table[[c for c in TABLE_COLUMNS if c in table]]


def judge_measurements(df: pd.DataFrame, notes: list | None = None, alpha: float = ALPHA_NIGHT) -> Drift:
    """``judge`` of ``measurements``' rows: each variable's nights judged (_judge_batch, every
    node's variables of as many nights at once), then each node's score (score_night)."""
    return _judge_rows([df], list(notes or []), alpha)


def _judge_rows(rows: list[pd.DataFrame], notes: list, alpha: float) -> Drift:
    """judge_measurements of the one table in ``rows``, which it takes out: neither that table nor
    the series drawn from it outlive their use (a week of 1,024-node nights: 1.2 million rows)."""
    d, info = _series_table(rows.pop(), notes)
    if info.empty:
        empty = pd.DataFrame(columns=VAR_KEY + ["status"])
        return Drift(empty, empty, notes)
    table = _judge_all(d, info, alpha)
    del d  # (a week of 1,024-node nights: 1.2 million measurements)
    table = _with_scores(table, info, alpha)
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
