"""The noise model every verdict over repeated measurements shares: the fleet verdict of
``gpucomm acceptance`` (a node against the other nodes of its class) and the nightly drift of
``gpucomm nightly`` (a node against its own earlier nights).

Everything here works on *badness*: the logarithm of a measured value, signed so that higher is
worse (``+log t`` for a time, ``-log r`` for a rate).  Performance spreads by factors, so one
spread serves a variable at every scale, and a loss is a shift of the badness:

* a **loss** ``L`` is the fraction of performance lost, the same for both kinds of variable: a
  bandwidth at ``(1 - L)`` of its level, a time at ``1 / (1 - L)`` of it; its shift is
  ``-log(1 - L)`` (``loss_to_shift``; 3.5 % is a shift of 0.0356);
* a node's **value** is the mean of its repeats less those more than ``CLIP`` within spreads worse
  than its median (``node_value``; without a within spread, the mean of the better half): a
  transiently slow repeat (another job's traffic, a daemon) does not move it, a node slow in every
  repeat moves it fully.  Its small bias, which depends on the number of repeats ``k``
  (``value_constants``), is taken out by ``corrected``, so that nodes with different ``k`` (a
  retest added) are comparable;
* the **within** spread (one repeat's standard deviation of badness inside a node) is pooled over
  the nodes from each node's residuals about its own median, robustly (normal-scaled MAD, corrected
  for the median's own shrinkage with ``k``: ``within_spread``);
* the **between** spread (how far healthy nodes of one class sit apart) is what the corrected node
  values spread beyond their within part (``between_spread``), from a session's nodes or a class
  file's healthy batch;
* a node's **z** is its corrected value's distance above the centre (a skipped mean of the other
  nodes, ``centre``, or a class file's centre) in units of ``standard_error``; a node is judged over several variables at
  once, so the bound is Bonferroni's (``z_bound``: ``alpha`` false alarms per healthy node over
  ``m`` variables);
* the **minimum detectable loss** (``detectable_loss``) is the loss that this standard error finds
  with probability ``power`` at that bound: what a verdict promises it can see.

Spreads never go below their floors (``FLOOR_WITHIN``, ``FLOOR_BETWEEN``): timer granularity and
the clock alone make a spread of 0 impossible, and a verdict resting on one would alarm on noise.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Iterable, Sequence

import numpy as np
from scipy import stats

#: units whose values are times (higher is worse); every other unit is a rate (lower is worse)
TIME_UNITS = frozenset({"us", "ms", "s", "ns"})
#: the smallest within-node spread of badness a verdict assumes (0.1 % of a value)
FLOOR_WITHIN = 0.001
#: the smallest between-node spread of badness a verdict assumes (0.1 % of a value)
FLOOR_BETWEEN = 0.001
#: false alarms per healthy node (family-wise over its variables) the verdicts default to
ALPHA = 1e-3
#: the probability with which a detectable loss is found
POWER = 0.99
#: Monte Carlo draws for the order-statistic constants (seeded: the same constants every run)
_DRAWS = 200_000


def higher_is_worse(unit: str | None) -> bool:
    """Whether a larger value of this unit is worse (a time), else it is a rate."""
    return str(unit or "").strip() in TIME_UNITS


def badness(values: Iterable[float], unit: str | None) -> np.ndarray:
    """Log values signed so that higher is worse; a value <= 0, NaN or inf gives NaN (the caller
    decides what a value that is not a measurement means: never a pass)."""
    v = np.asarray(list(values), dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(np.isfinite(v) & (v > 0), np.log(np.where(v > 0, v, 1.0)), np.nan)
    return out if higher_is_worse(unit) else -out


def loss_to_shift(loss: float | np.ndarray) -> float | np.ndarray:
    """The badness shift of a performance loss ``loss`` (a fraction, 0 <= loss < 1)."""
    return -np.log1p(-np.asarray(loss, dtype=float)) if np.ndim(loss) else -math.log1p(-float(loss))


def shift_to_loss(shift: float | np.ndarray) -> float | np.ndarray:
    """The performance loss of a badness shift (inverse of ``loss_to_shift``)."""
    return -np.expm1(-np.asarray(shift, dtype=float)) if np.ndim(shift) else -math.expm1(-float(shift))


def best_half(k: int) -> int:
    """How many of ``k`` repeats make a node's value without a within spread: the better half,
    rounded up."""
    return max(1, math.ceil(k / 2))


def node_value(b: Sequence[float], within: float | None = None) -> float:
    """A node's value from its repeats' badness.  With the pooled ``within`` spread known: the mean
    of the repeats that are not more than ``CLIP`` spreads worse than the node's median (a skipped
    mean: a transiently slow repeat is left out, the rest averaged at nearly a mean's efficiency).
    Without it: the mean of the best (lowest) half.  NaN where no repeat is a number."""
    arr = np.sort(np.asarray(b, dtype=float))
    arr = arr[np.isfinite(arr)]
    if not len(arr):
        return float("nan")
    if within is None or not within > 0:
        return float(arr[:best_half(len(arr))].mean())
    return float(arr[arr - np.median(arr) <= CLIP * within].mean())


#: a repeat more than this many within spreads worse than its node's median is left out of the
#: node's value (``node_value``): a normal repeat is that far out once in 700
CLIP = 3.0


@lru_cache(maxsize=None)
def value_constants(k: int, skipped: bool = True) -> tuple[float, float]:
    """(bias, sd) of ``node_value`` of ``k`` independent standard normal repeats (``skipped``: with
    the within spread known, else the best half): its expectation and its standard deviation, by
    a seeded Monte Carlo (the same numbers every run)."""
    if k < 1:
        raise ValueError("k must be at least 1")
    if k == 1:
        return 0.0, 1.0
    rng = np.random.default_rng(20261203 + k)
    x = np.sort(rng.standard_normal((_DRAWS, k)), axis=1)
    if skipped:
        keep = x - np.median(x, axis=1, keepdims=True) <= CLIP
        draws = (x * keep).sum(axis=1) / keep.sum(axis=1)
    else:
        draws = x[:, :best_half(k)].mean(axis=1)
    return float(draws.mean()), float(draws.std(ddof=1))


def best_half_constants(k: int) -> tuple[float, float]:
    """``value_constants`` of the best-half value (no within spread known)."""
    return value_constants(k, skipped=False)


@lru_cache(maxsize=None)
def residual_factor(k: int) -> float:
    """The normal-scaled MAD of residuals about their own median, for ``k`` independent standard
    normal repeats: residuals shrink towards 0 with few repeats, so a pooled estimate divides each
    node's residuals by this factor (seeded Monte Carlo)."""
    if k < 2:
        raise ValueError("a within-node spread needs at least 2 repeats")
    rng = np.random.default_rng(20261204 + k)
    x = rng.standard_normal((_DRAWS // k + 1, k))
    res = (x - np.median(x, axis=1, keepdims=True)).ravel()
    if k % 2:  # an odd k has one residual that is 0 by construction: it carries no spread
        res = res[res != 0]
    return float(stats.median_abs_deviation(res, scale="normal"))


def corrected(value: float, k: int, within: float, skipped: bool = True) -> float:
    """A node value with its bias for ``k`` repeats taken out (comparable across ``k``)."""
    return value - within * value_constants(k, skipped)[0]


def centre(values: Sequence[float], se: float) -> tuple[float, int]:
    """(centre, nodes used) of corrected node values: the mean of those within ``CLIP`` standard
    errors of their median (a skipped mean: slow nodes do not pull the centre, the healthy ones are
    averaged); (NaN, 0) for no value."""
    arr = np.asarray(values, dtype=float)
    arr = arr[np.isfinite(arr)]
    if not len(arr):
        return float("nan"), 0
    med = float(np.median(arr))
    keep = arr[np.abs(arr - med) <= CLIP * max(se, FLOOR_WITHIN)]
    return (float(keep.mean()), len(keep)) if len(keep) else (med, len(arr))


def robust_spread(x: Sequence[float]) -> float:
    """Normal-scaled median absolute deviation of ``x`` (NaN ignored); NaN for fewer than 2 values."""
    arr = np.asarray(x, dtype=float)
    arr = arr[np.isfinite(arr)]
    if len(arr) < 2:
        return float("nan")
    return float(stats.median_abs_deviation(arr, scale="normal"))


def within_spread(groups: Iterable[Sequence[float]]) -> tuple[float, int]:
    """(spread, residuals) of one repeat's badness inside a node, pooled over the nodes: each node's
    residuals about its own median, divided by ``residual_factor`` of its repeats, then a
    normal-scaled MAD over all of them and the root mean square of those within ``CLIP`` of it
    (robust against a transiently slow repeat and against a slow node: both are residuals of
    their own node).  (NaN, 0) where no node has 2 repeats."""
    pooled = []
    for g in groups:
        arr = np.asarray(g, dtype=float)
        arr = arr[np.isfinite(arr)]
        if len(arr) < 2:
            continue
        res = arr - np.median(arr)
        if len(arr) % 2:
            res = np.delete(res, np.argmin(np.abs(res)))  # the median itself
        pooled.append(res / residual_factor(len(arr)))
    if not pooled:
        return float("nan"), 0
    allres = np.concatenate(pooled)
    mad = float(stats.median_abs_deviation(allres, scale="normal"))
    if not mad > 0:
        return mad, len(allres)
    # then the root mean square of the residuals within CLIP of it, for a truncated normal's
    # variance: nearly a standard deviation's efficiency (MAD alone has 37 %), as robust
    kept = allres[np.abs(allres) <= CLIP * mad]
    truncated = stats.truncnorm.var(-CLIP, CLIP)
    return float(np.sqrt(np.mean(kept ** 2) / truncated)), len(allres)


def between_spread(values: Sequence[float], ks: Sequence[int], within: float, skipped: bool = True) -> float:
    """The between-node spread of badness: the robust spread of the corrected node values less
    their within part (each node's ``within * sd(k)``, in quadrature); NaN for fewer than 3 nodes."""
    vals = np.asarray(values, dtype=float)
    ok = np.isfinite(vals)
    if ok.sum() < 3:
        return float("nan")
    total = robust_spread(vals[ok])
    part = float(np.mean([(within * value_constants(int(k), skipped)[1]) ** 2 for k, g in zip(ks, ok) if g]))
    return math.sqrt(max(0.0, total ** 2 - part))


def standard_error(k: int, within: float, between: float, n_centre: int | None = None,
                   skipped: bool = True) -> float:
    """The standard deviation of a healthy node's corrected value about the centre it is judged
    against: its own repeats' part, the between-node part and, for a centre that is the skipped
    mean of ``n_centre`` nodes (``centre``), that centre's own (1 / n of the per-node variance).
    A node judged against a centre it is part of would be closer to it; ``centre`` is taken over
    the other nodes."""
    own = (max(within, FLOOR_WITHIN) * value_constants(k, skipped)[1]) ** 2 + max(between, FLOOR_BETWEEN) ** 2
    spread = own / n_centre if n_centre else 0.0
    return math.sqrt(own + spread)


def z_bound(m: int, alpha: float = ALPHA) -> float:
    """The one-sided z above which a node is flagged on one of its ``m`` variables, so that a
    healthy node is flagged with probability at most ``alpha`` (Bonferroni)."""
    if not (0 < alpha < 1) or m < 1:
        raise ValueError("alpha must be in (0, 1) and m at least 1")
    return float(stats.norm.isf(alpha / m))


def detectable_loss(se: float, bound: float, power: float = POWER) -> float:
    """The smallest loss found with probability ``power`` by a z bound ``bound`` at standard error
    ``se`` (a one-sided normal test): its shift is ``(bound + z_power) * se``."""
    return float(shift_to_loss((bound + stats.norm.isf(1 - power)) * se))


def repeats_needed(loss: float, within: float, between: float, bound: float, power: float = POWER,
                   n_centre: int | None = None, k_max: int = 64) -> int | None:
    """The fewest repeats per node with which ``loss`` is detectable, or None if even ``k_max`` is
    not enough (the between-node spread alone is too wide for it)."""
    for k in range(1, k_max + 1):
        if detectable_loss(standard_error(k, within, between, n_centre), bound, power) <= loss:
            return k
    return None
