"""The statistics core: every "is it slower?" that gpucomm answers is built from these functions
(docs/statistics.md states the model with these names): the fleet verdict of ``gpucomm
acceptance`` (fleetrule), the nightly drift (drift), the node pair matrix's pair rule, the
references and class files of ``gpucomm tolerances``, and the report's trend.  Arrays in,
numbers and dataclasses out; scipy and numpy where they have the function.

* **badness**: the logarithm of a value, signed so that higher is worse (``worse_sign``: the unit's
  direction as contract.PERF_UNIT_DIRECTION declares it, else the bounded side of its reference).
  Performance spreads by factors, so one spread serves a variable at every scale; a **loss** L
  (the fraction of performance lost: a rate at 1 - L of its level, a time at 1 / (1 - L)) is the
  shift ``-log(1 - L)`` (``loss_to_shift``).
* **the centre** of a sample (``location``): its skipped mean, the mean of the values at most
  ``CLIP`` spreads worse than its lower median (``lower_median``; and ``CLIP_BETTER`` better).  A
  node's value over its repeats, a history's over its nights, a fleet's over its nodes.
  Transient slowdowns, fewer than half the repeats (one of two too), are skipped without skipping
  the good repeats beside them; a node slow in most of its repeats is slow (the lower median
  sits among them).
* **the spread** of one sample (``spread``): its skipped standard deviation (the same skip, the
  truncation's variance divided out); of repeats inside groups (``within``): the same estimator
  pooled over the groups' residuals, unbiased for normal repeats by per-k constants
  (``CONSTANTS``, simulated and committed: ``constants_table``), with its degrees of freedom.
* **the bound** (``bound``): Student's t quantile at ``alpha / m`` (Bonferroni over a node's ``m``
  variables) with the degrees of freedom of the spreads it rests on (``satterthwaite``).
* **a value's own precision** (``own_variance``): the within-run standard error a run declared
  for its value (the session report's ``precision``) floors a group's variance, never lowers it.
* **what it can see** (``detectable_loss``): the loss found with probability ``POWER`` at a bound.
* **two modes** (``modes``): a variable whose repeats sit in two separated groups; a bimodal
  *measurement* where single nodes' repeats straddle both, a slow *group* of nodes where they do not.
* **the distribution-free tail** (``tail_p``): how often the median of k repeats drawn from a pool
  of healthy repeats is at least this bad (a binomial count over the pool's order statistics).

Spreads never go below ``FLOOR``: the clock alone makes a spread of 0 impossible.
"""

from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, Sequence

import numpy as np
from scipy import stats

from ..contract import HIGHER_IS_WORSE, LOWER_IS_WORSE, PERF_UNIT_DIRECTION

__all__ = ["HIGHER_IS_WORSE", "LOWER_IS_WORSE", "PERF_UNIT_DIRECTION"]  # the direction, read through the core

#: the smallest spread of badness assumed (0.1 % of a value)
FLOOR = 0.001
#: the skip of ``location`` and ``spread``: values more than CLIP spreads worse than the median
#: (a transient slowdown), or CLIP_BETTER spreads better (no run is transiently faster: a value
#: that much better is a fault of its own, not noise to average)
CLIP, CLIP_BETTER = 3.0, 5.0
#: false alarms per healthy node (family-wise over its variables) the verdicts default to
ALPHA = 1e-3
#: the probability with which a detectable loss is found
POWER = 0.99
#: a variable that cannot see this loss (a node half as fast) with probability POWER is "blind"
BLIND_LOSS = 0.5
#: the variance of a standard normal truncated at +-CLIP (what the skip leaves of a variance)
TRUNC_VAR = float(stats.truncnorm.var(-CLIP, CLIP))
#: Monte Carlo draws of the per-k constants (seeded: constants_table regenerates the committed table)
DRAWS = 200_000
#: the largest number of repeats the committed table covers (more: the largest row, scaled)
K_TABLE = 24


#: the smallest loss (a fraction of performance) a verdict acts on, per kind of variable, whatever
#: its z: healthy nodes of one class, and one node from boot to boot, differ by a little (a latency
#: by a few per cent: CPU clocks, PCIe; a bandwidth by one or two); a site sets its own (acceptance's
#: --min-loss KIND=FRACTION)
MIN_LOSS = {"time": 0.03, "rate": 0.02, "ratio": 0.10}


def kind_of(unit: object, sign: int) -> str:
    """The kind of a variable (MIN_LOSS's keys): a ratio (unit 'x'), a time or a rate."""
    return "ratio" if str(unit) == "x" else ("time" if sign > 0 else "rate")


def min_loss(unit: object, sign: int) -> float:
    """MIN_LOSS of a variable's kind."""
    return MIN_LOSS[kind_of(unit, sign)]


class UnknownDirection(ValueError):
    """A perf variable whose unit declares no direction and whose reference bounds no side."""


# -- direction and badness -----------------------------------------------------------------------

def worse_sign(unit: object, lower: object = None, upper: object = None) -> int:
    """+1 where a higher value is worse (a time, a slowdown), -1 where a lower one is (a rate):
    the unit's direction (contract.PERF_UNIT_DIRECTION), else the side its ReFrame reference
    bounds (only an upper bound: higher is worse; only a lower one: lower is worse).
    UnknownDirection where neither says."""
    u = str(unit or "").strip()
    if u in PERF_UNIT_DIRECTION:
        return PERF_UNIT_DIRECTION[u]
    lo, hi = _bound_set(lower), _bound_set(upper)
    if hi and not lo:
        return HIGHER_IS_WORSE
    if lo and not hi:
        return LOWER_IS_WORSE
    raise UnknownDirection(f"unit {u!r} declares no direction (contract.PERF_UNIT_DIRECTION) and its "
                           "reference bounds no single side")


def _bound_set(v: object) -> bool:
    try:
        return v is not None and math.isfinite(float(v))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def lower_is_better(unit: object, lower: object = None, upper: object = None) -> bool:
    """Whether a lower value is better (``worse_sign`` +1); False for an unknown direction."""
    try:
        return worse_sign(unit, lower, upper) == HIGHER_IS_WORSE
    except UnknownDirection:
        return False


def badness(values: Iterable[float] | np.ndarray, sign: int) -> np.ndarray:
    """Log values signed so that higher is worse (``sign``: worse_sign's); a value <= 0, NaN or
    inf gives NaN (not a measurement: the caller says what that means, never a pass)."""
    v = np.asarray(values if isinstance(values, np.ndarray) else list(values), dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(np.isfinite(v) & (v > 0), np.log(np.where(v > 0, v, 1.0)), np.nan)
    return out * float(sign)


def in_unit(bad: float | np.ndarray, sign: int) -> float | np.ndarray:
    """A badness back in its variable's unit (the inverse of ``badness``)."""
    return np.exp(np.asarray(bad, dtype=float) * float(sign)) if np.ndim(bad) else math.exp(float(bad) * sign)


def loss_to_shift(loss: float | np.ndarray) -> Any:
    """The badness shift of a performance loss (a fraction, 0 <= loss < 1)."""
    return -np.log1p(-np.asarray(loss, dtype=float)) if np.ndim(loss) else -math.log1p(-float(loss))


def shift_to_loss(shift: float | np.ndarray) -> Any:
    """The performance loss of a badness shift (the inverse of ``loss_to_shift``)."""
    return -np.expm1(-np.asarray(shift, dtype=float)) if np.ndim(shift) else -math.expm1(-float(shift))


# -- the centre and the spread -------------------------------------------------------------------

class _quiet:
    """numpy's all-NaN and empty-slice warnings silenced (a sample without a value is NaN, said elsewhere)."""

    def __enter__(self) -> None:
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)
        self._e = np.errstate(all="ignore")
        self._e.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._e.__exit__(*exc)
        self._w.__exit__(*exc)


def _median(x: np.ndarray, axis: int = -1, keepdims: bool = False) -> np.ndarray:
    """np.median, or np.nanmedian where there is a NaN (many times slower)."""
    if np.isnan(x).any():
        return np.nanmedian(x, axis=axis, keepdims=keepdims)
    return np.median(x, axis=axis, keepdims=keepdims)


#: the MAD of a standard normal sample (scipy.stats.median_abs_deviation's scale="normal")
NORMAL_MAD = float(stats.norm.ppf(0.75))


def mad(x: np.ndarray | Sequence[float], axis: int = -1) -> np.ndarray:
    """The normal-scaled median absolute deviation along ``axis`` (NaN ignored): scipy's
    median_abs_deviation(scale="normal") computed as it does, without its per-call overhead
    (a tenth of the time on the small samples the verdicts judge)."""
    x = np.asarray(x, dtype=float)
    with _quiet():
        med = _median(x, axis=axis, keepdims=True)
        return np.asarray(_median(np.abs(x - med), axis=axis) / NORMAL_MAD)


def lower_median(x: np.ndarray | Sequence[float]) -> Any:
    """The lower median along the last axis (NaN ignored): the ((n - 1) // 2)-th smallest of n
    values, the median for an odd n, the better middle value for an even one (badness: higher is
    worse), so that it moves only where most of the values are worse (one of two, two of four
    do not); NaN where there is no value."""
    v = np.sort(np.asarray(x, dtype=float), axis=-1)  # NaN last
    n = np.isfinite(v).sum(axis=-1)
    idx = np.clip((n - 1) // 2, 0, None)[..., None]
    out = np.where(n > 0, np.take_along_axis(v, idx, axis=-1)[..., 0], np.nan)
    return float(out) if out.ndim == 0 else out


def _kept(x: np.ndarray, scale: np.ndarray | float | None) -> tuple[np.ndarray, np.ndarray]:
    """(lower median, mask of the values kept) along the last axis: those at most CLIP spreads
    worse and at most CLIP_BETTER spreads better than the lower median; the spread: ``scale``
    where given (a known spread, broadcast over the leading axes), else the sample's MAD."""
    with _quiet():
        med = np.asarray(lower_median(x))[..., None]
        s = mad(x, axis=-1)[..., None] if scale is None else np.asarray(scale, dtype=float)[..., None]
        s = np.fmax(np.nan_to_num(s, nan=FLOOR), FLOOR)
        d = x - med
        return med, np.isfinite(x) & (d <= CLIP * s) & (-d <= CLIP_BETTER * s)


def location(x: np.ndarray | Sequence[float], scale: np.ndarray | float | None = None) -> Any:
    """The skipped mean along the last axis: the mean of the values at most CLIP spreads
    (``scale``, else the sample's own MAD) worse than the lower median and CLIP_BETTER better;
    NaN where there is no value."""
    x = np.asarray(x, dtype=float)
    med, keep = _kept(x, scale)
    with _quiet():
        n = keep.sum(axis=-1)
        val = np.where(keep, x, 0.0).sum(axis=-1) / n
        out = np.where(n > 0, val, med[..., 0])
    return float(out) if out.ndim == 0 else out


def spread(x: np.ndarray | Sequence[float]) -> Any:
    """The skipped standard deviation along the last axis: the values ``location`` keeps, their
    standard deviation about it, the truncation's share (TRUNC_VAR) divided out; NaN for fewer
    than 2 values."""
    x = np.asarray(x, dtype=float)
    _, keep = _kept(x, None)
    with _quiet():
        n = keep.sum(axis=-1)
        loc = np.where(keep, x, 0.0).sum(axis=-1, keepdims=True) / n[..., None]
        ss = np.where(keep, (x - loc) ** 2, 0.0).sum(axis=-1)
        out = np.where(n >= 2, np.sqrt(ss / (n - 1) / TRUNC_VAR), np.nan)
    return float(out) if out.ndim == 0 else out


# -- the spread of repeats inside groups (nodes, nights) -----------------------------------------

@dataclass(frozen=True)
class Spread:
    """A spread of badness and its degrees of freedom (inf: known, e.g. a floor or a class file's)."""
    value: float
    df: float


def _residuals(b: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """Each group's residuals about ``centre`` (its own median or location; last axis repeats),
    NaN for a group of fewer than 2 repeats; for an odd count about its median the median's own
    residual (0 by construction) is NaN."""
    k = np.isfinite(b).sum(axis=-1, keepdims=True)
    res = b - centre
    return np.where(k >= 2, res, np.nan)


def _drop_median_residual(res: np.ndarray) -> np.ndarray:
    k = np.isfinite(res).sum(axis=-1, keepdims=True)
    absres = np.where(np.isfinite(res), np.abs(res), np.inf)
    first = np.argmin(absres, axis=-1)[..., None]
    odd = (k % 2 == 1)
    picked = np.take_along_axis(res, first, axis=-1)
    np.put_along_axis(res, first, np.where(odd, np.nan, picked), axis=-1)
    return res


def _pooled_rms(res: np.ndarray, clip_scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(root mean square of the residuals within CLIP ``clip_scale`` of 0, residuals counted) over
    the last two axes."""
    flat = res.reshape(res.shape[:-2] + (-1,))
    with _quiet():
        s = np.fmax(np.nan_to_num(np.asarray(clip_scale, dtype=float), nan=FLOOR), FLOOR)[..., None]
        kept = np.where(np.abs(flat) <= CLIP * s, flat, np.nan)
        return np.sqrt(np.nanmean(kept ** 2, axis=-1)), np.isfinite(flat).sum(axis=-1)


def _by_k(k: np.ndarray, column: str) -> np.ndarray:
    """A CONSTANTS column for an array of repeat counts (NaN for fewer than 2)."""
    k = np.asarray(k, dtype=int)
    out = np.full(k.shape, np.nan)
    for v in np.unique(k[k >= 2]):
        out[k == v] = constant(int(v), column)
    return out


def _weighted_scale(b: np.ndarray, res: np.ndarray, column: str) -> np.ndarray:
    """The pooled residuals' scale for normal repeats: the groups' CONSTANTS ``column``, in
    quadrature, weighted by their residual counts."""
    k = np.isfinite(b).sum(axis=-1)
    used = np.isfinite(res).sum(axis=-1)
    with _quiet():
        # a group without a residual (no repeat, or one) weighs nothing, whatever its constant
        return np.sqrt(np.where(used > 0, used * _by_k(k, column) ** 2, 0.0).sum(axis=-1) / used.sum(axis=-1))


def _within_arrays(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``within``'s (spread, degrees of freedom) over the last two axes (leading axes: independent
    sets, e.g. a benchmark's fleets)."""
    with _quiet():
        res1 = _drop_median_residual(_residuals(b, _median(b, axis=-1, keepdims=True)))
        first = mad(res1.reshape(res1.shape[:-2] + (-1,)), axis=-1) / _weighted_scale(b, res1, "median_mad")
        loc = location(b, first[..., None] if np.ndim(first) else first)
        res2 = _residuals(b, np.asarray(loc)[..., None])
        rms, n = _pooled_rms(res2, first)
        value = rms / _weighted_scale(b, res2, "within_scale")
        k = np.isfinite(b).sum(axis=-1)
        used = np.isfinite(res2).sum(axis=-1)
        df = np.where(used > 0, used * _by_k(k, "within_eff"), 0.0).sum(axis=-1)
    ok = n > 0
    return np.where(ok, value, np.nan), np.where(ok, np.nan_to_num(df), 0.0)


def within(b: np.ndarray | Sequence[Sequence[float]]) -> Spread:
    """The spread of one repeat's badness inside a group (a node's repeats, a night's
    measurements), pooled over the groups (rows of ``b``, NaN padded): residuals about each
    group's median give a first (MAD) spread; residuals about each group's ``location`` at that
    spread, those within CLIP of it, give the root mean square; both divided by their value for
    normal repeats (CONSTANTS), so that the estimate is unbiased for one repeat's standard
    deviation.  Robust against a transiently slow repeat and a slow group (each is a residual of
    its own group).  Spread(NaN, 0) where no group has 2 repeats."""
    arr = pad(b) if not isinstance(b, np.ndarray) else np.asarray(b, dtype=float)
    value, df = _within_arrays(arr)
    return Spread(float(value), float(df))


def within_arrays(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``within`` over the last two axes of ``b`` for every leading index at once."""
    return _within_arrays(np.asarray(b, dtype=float))


def pad(groups: Iterable[Sequence[float]]) -> np.ndarray:
    """Groups of unequal length as one (groups, longest) array, NaN where a group is shorter."""
    rows = [np.asarray(g, dtype=float).ravel() for g in groups]
    out = np.full((len(rows), max([len(r) for r in rows] + [1])), np.nan)
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return out


def location_sd(k: int | np.ndarray) -> Any:
    """The standard deviation of ``location`` of k normal repeats with a known spread of 1 (the
    standard error of a group's value is ``location_sd(k) * within``); 1 for k = 1."""
    if np.ndim(k):
        kk = np.asarray(k, dtype=int)
        out = np.where(kk <= 1, 1.0, _by_k(np.clip(kk, 2, None), "location_sd"))
        return np.where(kk < 1, np.nan, out)
    return 1.0 if int(k) <= 1 else constant(int(k), "location_sd")


def run_variance(run_se: np.ndarray | None, n: int) -> np.ndarray:
    """Per group (rows of ``run_se``: each repeat's own standard error of its badness, the
    within-run precision a run declared, NaN where unknown): the mean of the known ones squared,
    NaN where none is known; ``n`` NaN where ``run_se`` is None."""
    if run_se is None:
        return np.full(n, np.nan)
    se = np.asarray(run_se, dtype=float)
    se = np.where(np.isfinite(se) & (se >= 0), se, np.nan)
    with _quiet():
        return np.nanmean(se ** 2, axis=-1) if se.size else np.full(n, np.nan)


def own_variance(k: int | np.ndarray, within_spread: float, run_se: np.ndarray | None = None) -> Any:
    """The variance of a group's value (``location`` of its k repeats): ``location_sd(k) *
    within_spread`` squared, never below the runs' own declared error, the mean of their squared
    standard errors over k (``run_variance``).  The within-run error explains little of the
    repeat-to-repeat noise (a launch carries a level of its own), so it only widens: at k = 1,
    where no within spread exists, it is all a group's value is known to; unknown, nothing changes."""
    base = (location_sd(k) * within_spread) ** 2
    kk = np.asarray(k, dtype=float)
    run = run_variance(run_se, int(np.size(kk))).reshape(np.shape(kk)) if run_se is not None else np.nan
    with _quiet():
        floor = np.where(kk >= 1, run / np.clip(kk, 1, None), np.nan)
    out = np.fmax(base, floor)
    return float(out) if np.ndim(out) == 0 else out


# -- the bound and what it sees ------------------------------------------------------------------

def bound(alpha: float, m: int | np.ndarray = 1, df: float | np.ndarray = math.inf) -> Any:
    """The one-sided bound a healthy standardised value exceeds with probability at most ``alpha``
    over ``m`` tries (Bonferroni): Student's t quantile with ``df`` degrees of freedom (the normal
    one for an infinite df)."""
    if not (0 < alpha < 1) or np.any(np.asarray(m) < 1):
        raise ValueError("alpha must be in (0, 1) and m at least 1")
    p = alpha / np.asarray(m, dtype=float)
    d = np.asarray(df, dtype=float)
    out = np.where(np.isfinite(d), stats.t.isf(p, np.clip(np.nan_to_num(d, nan=1.0), 1, None)), stats.norm.isf(p))
    return float(out) if out.ndim == 0 else out


def satterthwaite(parts: Sequence[np.ndarray | float], dfs: Sequence[np.ndarray | float]) -> np.ndarray:
    """Welch-Satterthwaite degrees of freedom of a sum of variance estimates ``parts`` with ``dfs``
    degrees of freedom each (an infinite df: a known part)."""
    total = sum(np.asarray(p, dtype=float) for p in parts)
    with _quiet():
        den = sum(np.where(np.isfinite(d), np.asarray(p, dtype=float) ** 2 / np.asarray(d, dtype=float), 0.0)
                  for p, d in zip(parts, dfs))
        return np.where(den > 0, total ** 2 / den, np.inf)


def detectable_loss(se: float | np.ndarray, at: float | np.ndarray, power: float = POWER) -> Any:
    """The smallest loss found with probability ``power`` by a bound ``at`` at standard error
    ``se`` (a one-sided test): its shift is ``(at + z_power) * se``."""
    z = _z_power(power)
    if np.ndim(se) or np.ndim(at):
        return shift_to_loss((np.asarray(at, dtype=float) + z) * np.asarray(se, dtype=float))
    return shift_to_loss((float(at) + z) * float(se))


@lru_cache(maxsize=None)
def _z_power(power: float) -> float:
    return float(stats.norm.isf(1 - power))


# -- two modes -----------------------------------------------------------------------------------

#: repeats more than CLIP within spreads from their group's median are this large a share of all
#: repeats (a normal noise: 0.3 %; transient slowdowns of 2 % of the repeats: about 2 %) ...
MODES_SHARE = 0.1
#: ... in at least this many groups (and MODES_STRADDLE of the groups with 2 or more repeats): the
#: groups' repeats straddle modes the within spread does not describe, a bimodal measurement (one
#: node slow in 3 of its 5 repeats, or one transient elsewhere, is not one) ...
MODES_GROUPS, MODES_STRADDLE = 3, 0.25
#: ... and more of them than transients and normal tails give (MODES_P0 of the repeats) but with
#: probability MODES_ALPHA (a binomial count: a few in a small batch are no mode)
MODES_P0, MODES_ALPHA = 0.03, 1e-3
#: two groups of nodes: the gap between the groups' values is at least MODES_D + MODES_D_SMALL /
#: sqrt(nodes) of their pooled spreads (Ashman's D of the best split, which is large for unimodal
#: samples too: its 99.9th percentile over 2000 normal, Student's t(3) and lognormal samples was
#: 5.1-7.0 at 25 values, 3.0-3.3 at 320: test_statcore), each group at least MODES_MIN_NODES nodes
MODES_D, MODES_D_SMALL, MODES_MIN_NODES = 3.0, 25.0, 2


@dataclass(frozen=True)
class Modes:
    """What ``modes`` found of a variable's repeats (groups x repeats): ``share`` of the repeats
    more than CLIP within spreads from their group's median, ``straddle`` (groups with such a
    repeat) of ``groups`` (with 2 or more repeats), ``gap`` (the loss between the two modes of all
    repeats, the best split's), ``measurement``: a bimodal (or heavy-tailed) measurement."""
    share: float
    straddle: int
    groups: int
    gap: float
    measurement: bool


def modes(b: np.ndarray, within_spread: float) -> Modes:
    """Whether the repeats of ``b`` (groups x repeats, NaN padded) straddle modes inside their
    groups beyond what ``within_spread`` describes: MODES_SHARE of the repeats, in MODES_GROUPS
    and MODES_STRADDLE of the groups, more than CLIP spreads from their group's median."""
    b = np.asarray(b, dtype=float)
    fin = np.isfinite(b)
    k = fin.sum(axis=1)
    with _quiet():
        med = _median(b, axis=-1, keepdims=True)
        out = fin & (k[:, None] >= 2) & (np.abs(b - med) > CLIP * max(within_spread, FLOOR))
    several = int((k >= 2).sum())
    n_rep = int(fin[k >= 2].sum())
    share = float(out.sum() / n_rep) if n_rep else 0.0
    straddle = int(out.any(axis=1).sum())
    many = int(out.sum()) > stats.binom.isf(MODES_ALPHA, max(n_rep, 1), MODES_P0)
    measurement = many and share >= MODES_SHARE and straddle >= max(MODES_GROUPS, MODES_STRADDLE * several)
    return Modes(share, straddle, several, _gap(b[fin]) if measurement else math.nan, measurement)


def _gap(v: np.ndarray) -> float:
    """The loss between the two modes of ``v``: its best two-group split's (Otsu's) centres."""
    v = np.sort(v)
    if len(v) < 4:
        return math.nan
    c1, c2 = np.cumsum(v), np.cumsum(v ** 2)
    i = np.arange(1, len(v))
    m1, m2 = c1[i - 1] / i, (c1[-1] - c1[i - 1]) / (len(v) - i)
    ss = (c2[i - 1] - i * m1 ** 2) + ((c2[-1] - c2[i - 1]) - (len(v) - i) * m2 ** 2)
    j = int(np.argmin(ss))
    return float(shift_to_loss(m2[j] - m1[j]))


def slow_group(x: np.ndarray, min_loss: float) -> np.ndarray:
    """The nodes of a slow *group* (a mask over ``x``, the nodes' values): where the values split
    into two groups of at least MODES_MIN_NODES nodes whose gap is at least ``min_loss`` and
    MODES_D + MODES_D_SMALL / sqrt(n) of their pooled spreads (Ashman's D), the slower group; else
    none.  Judged against the faster group, the slow group is drained even where it is most nodes."""
    fin = np.isfinite(x)
    v = np.sort(x[fin])
    n = len(v)
    none = np.zeros(len(x), dtype=bool)
    if n < 2 * MODES_MIN_NODES:
        return none
    c1, c2 = np.cumsum(v), np.cumsum(v ** 2)
    i = np.arange(MODES_MIN_NODES, n - MODES_MIN_NODES + 1)
    m1, m2 = c1[i - 1] / i, (c1[-1] - c1[i - 1]) / (n - i)
    ss = (c2[i - 1] - i * m1 ** 2) + ((c2[-1] - c2[i - 1]) - (n - i) * m2 ** 2)
    j = int(np.argmin(ss))
    cut = int(i[j])
    pooled = math.sqrt(max(float(ss[j]) / max(n - 2, 1), 0.0))
    gap = float(m2[j] - m1[j])
    if gap / max(pooled, FLOOR) < MODES_D + MODES_D_SMALL / math.sqrt(n) or shift_to_loss(gap) < min_loss:
        return none
    return fin & (x > (v[cut - 1] + v[cut]) / 2)


# -- the distribution-free tail ------------------------------------------------------------------

def tail_p(value: np.ndarray | float, k: np.ndarray | int, pool: np.ndarray) -> Any:
    """How often the lower median of ``k`` repeats drawn from ``pool`` (healthy repeats' badness,
    sorted or not) is at least ``value``: with p the share of the pool at or above ``value`` (one
    added: the value itself could have been drawn), the chance that at least k // 2 + 1 of k
    draws are (a binomial tail).  Distribution-free: no normal tail assumed."""
    pool = np.sort(np.asarray(pool, dtype=float)[np.isfinite(pool)])
    v = np.asarray(value, dtype=float)
    kk = np.asarray(k, dtype=int)
    at_or_above = len(pool) - np.searchsorted(pool, v, side="left")
    p = (at_or_above + 1) / (len(pool) + 1)
    need = tail_need(kk)
    out = np.where(np.isfinite(v) & (kk > 0), stats.binom.sf(need - 1, np.clip(kk, 1, None), p), np.nan)
    return float(out) if out.ndim == 0 else out


def tail_need(k: np.ndarray | int) -> np.ndarray:
    """How many of k repeats are at least a value where their lower median is: k // 2 + 1."""
    return np.asarray(k, dtype=int) // 2 + 1


# -- the committed constants ---------------------------------------------------------------------

#: the per-k constants of normal repeats (seeded Monte Carlo, constants_table): location_sd: the
#: standard deviation of ``location`` at a known spread 1; median_mad: the normal-scaled MAD of
#: residuals about their group's median (the first pass of ``within``); within_scale: ``within``'s
#: root mean square on an endless pool (divided out); within_eff: degrees of freedom of ``within``
#: per residual (2 / the variance of its square, over pools of 8 groups)
CONSTANT_COLUMNS = ("k", "location_sd", "median_mad", "within_scale", "within_eff")
CONSTANTS_FILE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "statcore_constants.csv")


def simulate(k: int, draws: int = DRAWS) -> dict[str, float]:
    """One row of the constants for ``k`` repeats (seeded: the same numbers every run)."""
    rng = np.random.default_rng(20261204 + k)
    x = rng.standard_normal((draws // k + 1, k))
    loc_sd = float(np.std(location(x, 1.0), ddof=1))
    if k < 2:
        return dict(k=k, location_sd=loc_sd, median_mad=math.nan, within_scale=math.nan, within_eff=math.nan)
    res = _drop_median_residual(_residuals(x, np.median(x, axis=-1, keepdims=True))).ravel()
    med_mad = float(mad(res[np.isfinite(res)]))
    big = x[None, :, :]
    pools = rng.standard_normal((4000, 8, k))
    scale, eff = _second_pass_constants(big, pools, med_mad)
    return dict(k=k, location_sd=loc_sd, median_mad=med_mad, within_scale=scale, within_eff=eff)


def _second_pass_constants(big: np.ndarray, pools: np.ndarray, med_mad: float) -> tuple[float, float]:
    """(within_scale, within_eff) of k repeats: ``within``'s second pass on an endless pool and on
    pools of 8 groups, its first pass scaled by ``med_mad``."""
    def rms(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        res1 = _drop_median_residual(_residuals(b, np.median(b, axis=-1, keepdims=True)))
        first = mad(res1.reshape(res1.shape[:-2] + (-1,)), axis=-1) / med_mad
        loc = location(b, first[..., None])
        return _pooled_rms(_residuals(b, np.asarray(loc)[..., None]), first)
    scale = float(rms(big)[0][0])
    est, n = rms(pools)
    return scale, float(2.0 / np.var((est / scale) ** 2) / n.mean())


def constants_table(ks: Iterable[int] = range(1, K_TABLE + 1), draws: int = DRAWS) -> list[dict[str, float]]:
    """The committed table's rows, regenerated (tests/unit/test_statcore.py compares them)."""
    return [simulate(k, draws) for k in ks]


def write_constants(path: str = CONSTANTS_FILE) -> None:
    """Write the table (``python -m gpucomm.analysis.statcore``)."""
    with open(path, "w", newline="") as fp:
        w = csv.DictWriter(fp, fieldnames=CONSTANT_COLUMNS)
        w.writeheader()
        for row in constants_table():
            w.writerow({c: (f"{row[c]:.6g}" if c != "k" else row[c]) for c in CONSTANT_COLUMNS})


@lru_cache(maxsize=None)
def _table() -> dict[int, dict[str, float]]:
    with open(CONSTANTS_FILE) as fp:
        return {int(r["k"]): {c: float(r[c]) for c in CONSTANT_COLUMNS[1:]} for r in csv.DictReader(fp)}


def constant(k: int, column: str) -> float:
    """A committed constant for ``k`` repeats; beyond the table, its last row's (location_sd
    scaled by sqrt(K / k): a skipped mean's spread falls as a mean's)."""
    table = _table()
    if k in table:
        return table[k][column]
    last = table[max(table)]
    return last[column] * math.sqrt(max(table) / k) if column == "location_sd" else last[column]


if __name__ == "__main__":
    write_constants()
    print(f"wrote {CONSTANTS_FILE}")
