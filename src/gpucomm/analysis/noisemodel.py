"""The noise model every verdict over repeated measurements shares: the fleet verdict of
``gpucomm acceptance`` (a node against the other nodes of its class) and the nightly drift of
``gpucomm nightly`` (a node against its own earlier nights).

Everything here works on *badness*: the logarithm of a measured value, signed so that higher is
worse (``+log t`` for a time, ``-log r`` for a rate).  Performance spreads by factors, so one
spread serves a variable at every scale, and a loss is a shift of the badness:

* a **loss** ``L`` is the fraction of performance lost, the same for both kinds of variable: a
  bandwidth at ``(1 - L)`` of its level, a time at ``1 / (1 - L)`` of it; its shift is
  ``-log(1 - L)`` (``loss_to_shift``; 3.5 % is a shift of 0.0356);
* a node's **value** is the mean of its repeats less those more than ``VALUE_CLIP`` within
  spreads worse than its ``ceil(k/3)``-th best repeat (``node_value``, ``node_values``; without a
  within spread, the mean of the better half): up to two thirds of its repeats transiently slow
  (another job's traffic, a daemon) do not move it, a node slow in every repeat moves it fully.
  Its small bias, which depends on the number of repeats ``k`` (``value_constants``), is taken out
  by ``corrected``, so that nodes with different ``k`` (a retest added) are comparable;
* the **within** spread (one repeat's standard deviation of badness inside a node) is pooled over
  the nodes in two passes (residuals about each node's median, then about its skipped mean), the
  root mean square of those within ``CLIP`` MADs, unbiased for normal repeats by a seeded Monte
  Carlo scale, with its degrees of freedom (``within_spreads``, ``within_constants``): robust
  against a transiently slow repeat and against a slow node (both are residuals of their own);
* the **between** spread (how far healthy nodes of one class sit apart) is what the corrected node
  values spread beyond their within part (``between_spread``), from a session's nodes or a class
  file's healthy batch;
* a node's **z** is its corrected value's distance above the centre (a skipped mean of the other
  nodes, ``centre``, or a class file's centre) in units of ``standard_error``; a node is judged
  over several variables at once, so the bound is Bonferroni's (``z_bound``: ``alpha`` false
  alarms per healthy node over ``m`` variables; ``t_bound`` for spreads estimated with finite
  degrees of freedom, ``satterthwaite`` for their sum);
* the **minimum detectable loss** (``detectable_loss``) is the loss that this standard error finds
  with probability ``power`` at that bound: what a verdict promises it can see.

Spreads never go below their floors (``FLOOR_WITHIN``, ``FLOOR_BETWEEN``): timer granularity and
the clock alone make a spread of 0 impossible, and a verdict resting on one would alarm on noise.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Callable, Iterable, Sequence

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
#: a variable whose verdict cannot find this loss (a fraction of performance: a node half as fast)
#: with probability POWER is not judged by it: acceptance's "not judged", the nightly's "blind"
BLIND_LOSS = 0.5
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


def anchor_rank(k: int) -> int:
    """Which repeat (0: the best) anchors a node's skipped mean: the ``ceil(k / 3)``-th best, so
    that up to two thirds of a node's repeats may be transiently slow without moving its value
    (with 2 % of repeats slow, 3 of 5 are so once in 13,000 node-variables: a median anchor would
    drain one healthy node in 400 over 30 variables)."""
    return max(1, math.ceil(k / 3)) - 1


def node_value(b: Sequence[float], within: float | None = None) -> float:
    """A node's value from its repeats' badness.  With the pooled ``within`` spread known: the mean
    of the repeats that are not more than ``CLIP`` spreads worse than its anchor (``anchor_rank``:
    a skipped mean: transiently slow repeats are left out, the rest averaged at nearly a mean's
    efficiency).  Without it: the mean of the best (lowest) half.  NaN where no repeat is a
    number."""
    arr = np.sort(np.asarray(b, dtype=float))
    arr = arr[np.isfinite(arr)]
    if not len(arr):
        return float("nan")
    if within is None or not within > 0:
        return float(arr[:best_half(len(arr))].mean())
    return float(arr[arr - arr[anchor_rank(len(arr))] <= VALUE_CLIP * within].mean())


#: a repeat more than this many within spreads worse than its node's anchor (``anchor_rank``, about
#: half a spread better than its median at k = 5) is left out of the node's value (``node_value``;
#: a normal repeat is that far out about once in 100: the value keeps nearly a mean's efficiency)
VALUE_CLIP = 3.0
#: residuals (within spread) and node values (centre) more than this many spreads out are outliers
CLIP = 3.5


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
        keep = x - x[:, anchor_rank(k)][:, None] <= VALUE_CLIP
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


def _pad(groups: Iterable[Sequence[float]]) -> np.ndarray:
    """Groups of unequal length as one (n, kmax) array, NaN where a group is shorter."""
    rows = [np.asarray(g, dtype=float).ravel() for g in groups]
    out = np.full((len(rows), max([len(r) for r in rows] + [1])), np.nan)
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return out


def _median(x: np.ndarray, axis: int, keepdims: bool = False) -> np.ndarray:
    """np.median, or np.nanmedian where there is a NaN (many times slower)."""
    if np.isnan(x).any():
        return np.nanmedian(x, axis=axis, keepdims=keepdims)
    return np.median(x, axis=axis, keepdims=keepdims)


def _residuals(b: np.ndarray) -> np.ndarray:
    """Each node's residuals about its own median (last axis: repeats, NaN padded); for an odd
    number of repeats the median's own residual (0 by construction, no spread in it) is NaN; NaN
    for a node of fewer than 2 repeats."""
    b = np.asarray(b, dtype=float)
    k = np.isfinite(b).sum(axis=-1, keepdims=True)
    with np.errstate(all="ignore"), _quiet():
        med = _median(b, axis=-1, keepdims=True)
    res = b - med
    absres = np.where(np.isfinite(res), np.abs(res), np.inf)
    first = np.argmin(absres, axis=-1)[..., None]
    odd = (k % 2 == 1)
    np.put_along_axis(res, first, np.where(odd, np.nan, np.take_along_axis(res, first, axis=-1)), axis=-1)
    return np.where(k >= 2, res, np.nan)


class _quiet:
    """Silence numpy's all-NaN warnings (a node or a fleet without a value is NaN, said elsewhere)."""

    def __enter__(self) -> None:
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc: Any) -> None:
        self._w.__exit__(*exc)


def _truncated_rms(res: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(root mean square of the residuals within ``CLIP`` normal-scaled MADs of 0, number of
    residuals) over the last two axes (nodes x repeats)."""
    flat = res.reshape(res.shape[:-2] + (-1,))
    with np.errstate(all="ignore"), _quiet():
        mad = _median(np.abs(flat), axis=-1, keepdims=True) / stats.norm.ppf(0.75)
        kept = np.where(np.abs(flat) <= CLIP * mad, flat, np.nan)
        rms = np.sqrt(np.nanmean(kept ** 2, axis=-1))
    return rms, np.isfinite(flat).sum(axis=-1)


def _scales(k: np.ndarray, table: Callable[[int], tuple[float, float]], res: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """(root mean square scale, degrees of freedom) of a pool of nodes of ``k`` repeats each."""
    kk = np.clip(k, 2, None)
    scale = np.vectorize(lambda v: table(int(v))[0], otypes=[float])(kk)
    eff = np.vectorize(lambda v: table(int(v))[1], otypes=[float])(kk)
    used = np.isfinite(res).sum(axis=-1)
    with np.errstate(all="ignore"):
        return np.sqrt((used * scale ** 2).sum(axis=-1) / used.sum(axis=-1)), (used * eff).sum(axis=-1)


def _first_pass(b: np.ndarray) -> np.ndarray:
    """The within spread from residuals about each node's median (robust, a little inefficient and
    moved by a slow repeat's shift of the median): the second pass's clip."""
    res = _residuals(b)
    rms, m = _truncated_rms(res)
    scale, _ = _scales(np.isfinite(b).sum(axis=-1), _median_constants, res)
    return np.where(m > 0, rms / scale, np.nan)


def _second_residuals(b: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Residuals about each node's skipped mean (``node_values`` at the first pass's spread)."""
    value, k = node_values(b, np.nan_to_num(first, nan=0.0))
    return np.where(k[..., None] >= 2, b - value[..., None], np.nan)


def _pool_constants(k: int, second: bool) -> tuple[float, float]:
    rng = np.random.default_rng(20261204 + k + 1000 * second)
    big = rng.standard_normal((1, _DRAWS // k + 1, k))
    pools = rng.standard_normal((4000, 8, k))
    if second:
        res_big = _second_residuals(big, _first_pass(big))
        res_pools = _second_residuals(pools, _first_pass(pools))
    else:
        res_big, res_pools = _residuals(big), _residuals(pools)
    scale = float(_truncated_rms(res_big)[0][0])
    est, m = _truncated_rms(res_pools)
    return scale, float(2.0 / np.var((est / scale) ** 2) / m.mean())


@lru_cache(maxsize=None)
def _median_constants(k: int) -> tuple[float, float]:
    return _pool_constants(k, second=False)


@lru_cache(maxsize=None)
def within_constants(k: int) -> tuple[float, float]:
    """(scale, efficiency) of ``within_spreads`` for nodes of ``k`` independent standard normal
    repeats (seeded Monte Carlo): ``scale`` the estimator's value on an endless pool (it is divided
    out, so that the estimate is unbiased for one repeat's standard deviation: residuals about a
    centre of few repeats are narrower than the repeats), ``efficiency`` the degrees of freedom
    of the squared estimate per residual (2 / its variance, over the residuals of 8 nodes): what
    the t-quantile of the decision takes."""
    if k < 2:
        raise ValueError("a within-node spread needs at least 2 repeats")
    return _pool_constants(k, second=True)


def within_spreads(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(spread, degrees of freedom) of one repeat's badness inside a node, pooled over the nodes:
    ``b`` has nodes and repeats on its last two axes (NaN where a node has fewer repeats); any
    leading axes are independent fleets (the benchmark's trials).  Two passes: residuals about
    each node's median give a first spread; then residuals about each node's skipped mean
    (``node_values`` at that spread: a slow repeat moves it less than it moves a median of few);
    each time the root mean square of the residuals within ``CLIP`` normal-scaled MADs of the pool,
    divided by its scale for normal repeats (``within_constants``).  Robust against a transiently
    slow repeat and against a slow node (both are residuals of their own node).  NaN and 0
    degrees of freedom where no node has 2 repeats."""
    b = np.asarray(b, dtype=float)
    res = _second_residuals(b, _first_pass(b))
    rms, m = _truncated_rms(res)
    scale, df = _scales(np.isfinite(b).sum(axis=-1), within_constants, res)
    return np.where(m > 0, rms / scale, np.nan), np.where(m > 0, df, 0.0)


def within_spread(groups: Iterable[Sequence[float]]) -> tuple[float, int]:
    """(spread, residuals) of one repeat's badness inside a node, pooled over the nodes (one fleet:
    ``within_spreads`` of the groups).  (NaN, 0) where no node has 2 repeats."""
    arr = _pad(groups)
    spread, _ = within_spreads(arr)
    return float(spread), int(np.isfinite(_residuals(arr)).sum())


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


# -- array forms (nodes x repeats on the last axes, any leading axes independent fleets) ---------

def node_values(b: np.ndarray, within: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """(values, repeats) of every node: ``node_value`` over the last axis of ``b`` (NaN padded),
    ``within`` broadcast over the leading axes (one spread per fleet)."""
    b = np.sort(np.asarray(b, dtype=float), axis=-1)  # NaN last
    w = np.asarray(within, dtype=float)[..., None, None]
    k = np.isfinite(b).sum(axis=-1)
    rank = np.vectorize(anchor_rank, otypes=[int])(np.clip(k, 1, None))[..., None]
    with np.errstate(all="ignore"), _quiet():
        anchor = np.take_along_axis(b, rank, axis=-1)
        keep = np.isfinite(b) & ((b - anchor <= VALUE_CLIP * w) | ~(w > 0))
        val = np.where(keep, b, 0.0).sum(axis=-1) / keep.sum(axis=-1)
    return np.where(k > 0, val, np.nan), k


def by_repeats(k: np.ndarray, which: int = 0, skipped: bool = True) -> np.ndarray:
    """``value_constants(k)[which]`` for an array of repeat counts (NaN for 0 repeats)."""
    k = np.asarray(k, dtype=int)
    out = np.full(k.shape, np.nan)
    for v in np.unique(k[k > 0]):
        out[k == v] = value_constants(int(v), skipped)[which]
    return out


def leave_one_out(x: np.ndarray, sd: np.ndarray | float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centre, spread, nodes) for each node of the other nodes' values (last axis): the skipped
    mean and skipped standard deviation (values within ``CLIP`` of the fleet's median, in units of
    the larger of its normal-scaled MAD and ``sd``, the spread the noise model expects) of the
    nodes without it.  The skip is decided once over all nodes (a slow node beyond it is out of
    every centre; one inside it is taken out of its own), so that this is linear in the nodes."""
    x = np.asarray(x, dtype=float)
    with np.errstate(all="ignore"), _quiet():
        med = _median(x, axis=-1, keepdims=True)
        mad = _median(np.abs(x - med), axis=-1, keepdims=True) / stats.norm.ppf(0.75)
        thr = CLIP * np.fmax(mad, np.asarray(sd, dtype=float)[..., None])
        keep = np.isfinite(x) & (np.abs(x - med) <= thr)
        d = np.where(keep, x - med, 0.0)
        s1, s2, n = d.sum(-1, keepdims=True), (d ** 2).sum(-1, keepdims=True), keep.sum(-1, keepdims=True)
        ni = n - keep
        mean = (s1 - d) / ni
        var = (s2 - d ** 2 - ni * mean ** 2) / (ni - 1) / stats.truncnorm.var(-CLIP, CLIP)
    return med + mean, np.sqrt(np.clip(var, 0, None)), ni.astype(float) * np.ones_like(x)


def t_bound(m: int | np.ndarray, alpha: float = ALPHA, df: float | np.ndarray = math.inf) -> np.ndarray:
    """``z_bound`` for a standard error estimated with ``df`` degrees of freedom: Student's t
    quantile (the normal one for an infinite ``df``)."""
    if not (0 < alpha < 1) or np.any(np.asarray(m) < 1):
        raise ValueError("alpha must be in (0, 1) and m at least 1")
    p = alpha / np.asarray(m, dtype=float)
    df = np.asarray(df, dtype=float)
    return np.where(np.isfinite(df), stats.t.isf(p, np.clip(df, 1, None)), stats.norm.isf(p))


def satterthwaite(parts: Sequence[np.ndarray], dfs: Sequence[np.ndarray]) -> np.ndarray:
    """Welch-Satterthwaite degrees of freedom of a sum of variance estimates ``parts`` with ``dfs``
    degrees of freedom each (an infinite df: a known part)."""
    total = sum(np.asarray(p, dtype=float) for p in parts)
    with np.errstate(all="ignore"):
        den = sum(np.where(np.isfinite(d), np.asarray(p, dtype=float) ** 2 / np.asarray(d, dtype=float), 0.0)
                  for p, d in zip(parts, dfs))
        return np.where(den > 0, total ** 2 / den, np.inf)
