"""The fleet rule of ``gpucomm acceptance``, on arrays: one variable's repeats of every node in, each
node's z, bound, loss and flag out.  The verdict (gpucomm.analysis.acceptance) and its benchmark
(gpucomm.analysis.fleetsim) call the same function, so the error rates the benchmark measures are
the verdict's.

For one variable (badness, gpucomm.analysis.noisemodel; nodes x repeats, NaN padded; leading axes
are independent fleets):

* within spread ``W``: the session's pooled estimate (``within_spreads``, with its degrees of
  freedom); with a class file, the session's where it is larger beyond chance (an F test), else
  the two pooled (``combine``); never below ``FLOOR_WITHIN``;
* node value: the skipped mean of its repeats, its bias for its ``k`` taken out;
* centre and between spread of each node: the skipped mean and spread of the *other* nodes
  (``leave_one_out``); the between spread ``B`` is that spread beyond its within part, combined
  with the class file's as the within spread is, never below ``FLOOR_BETWEEN``; with a class file
  whose centre the session's level agrees with (within ``SHIFT_Z`` standard errors), the centre is
  the class's (known from many nodes), else the other nodes' (``shifted``: the batch sits
  elsewhere than the class);
* standard error ``se``: ``sqrt((sd(k)^2 W^2 + B^2) (1 + 1/n_centre))``, its degrees of freedom
  by Welch-Satterthwaite from the session's estimates (a class file's number counts as known
  with its own, a floor as known);
* bound: Student's t at ``alpha / (TAIL m)`` (Bonferroni over the node's ``m`` variables) with those
  degrees of freedom; flagged where ``z > bound`` and the node's loss is at least ``min_loss``;
* detectable loss: the loss found with probability ``POWER`` at that bound and standard error.

Where fewer than ``MIN_NODES`` other nodes remain, or the fleet is bimodal (at least two nodes
*better* than the centre beyond the bound: the centre is then a slow group), only a class file can
judge: without one such a variable cannot be judged (``judgeable`` False, ``bimodal`` True where
that is the reason).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np
from scipy import stats

from . import noisemodel as nm

#: the bound is set at ``alpha / (TAIL * m)``: transient slowdowns of one to three within spreads
#: (kept in a node's value) make the far tail of healthy nodes' z heavier than the normal one the
#: bound assumes; with TAIL 2 the committed benchmark drains under --alpha (docs/acceptance.md;
#: an earlier form of the rule at TAIL 1 drained 1.4 per 1000 in development, not committed)
TAIL = 2.0
#: fewer other nodes than this: no fleet centre to judge against (the class file's, if given)
MIN_NODES = 3


@dataclass(frozen=True)
class ClassNoise:
    """A variable's noise numbers from a class file (``gpucomm tolerances --fleet``): its centre
    (mean corrected badness of the healthy batch), within and between spreads with their degrees
    of freedom."""

    centre: float
    within: float
    within_df: float
    between: float
    between_df: float


#: a session whose level (the mean of its nodes' centres) is this many standard errors from the
#: class file's centre is judged against its own nodes (the ``shifted`` flag says so); nearer, against
#: the class's centre, which a batch of many nodes knows better than a few others do
SHIFT_Z = 3.0
#: a session's spread is larger than the class file's where an F test says so at this level (at 1e-2, 6 nodes
#: took their own between spread, of 4 degrees of freedom, in 2 % of fleets with a slow node: 97 % detection); else
#: the two are pooled (their degrees of freedom add)
LARGER_P = 1e-3


def combine(var_s: np.ndarray, df_s: np.ndarray, var_c: float | None, df_c: float | None
            ) -> tuple[np.ndarray, np.ndarray]:
    """(variance, degrees of freedom) of a spread known from the session (``var_s``, ``df_s``) and
    maybe a class file: the session's where it is larger beyond chance (an F test at ``LARGER_P``;
    the node class has changed, or this batch is noisier), else the two pooled (the larger of the
    two where only one is known)."""
    var_s = np.asarray(var_s, dtype=float)
    df_s = np.broadcast_to(np.asarray(df_s, dtype=float), var_s.shape)
    if var_c is None or not var_c > 0:
        return np.where(np.isfinite(var_s), np.clip(var_s, 0, None), 0.0), np.where(np.isfinite(var_s), df_s, np.inf)
    ok = np.isfinite(var_s) & (df_s > 0)
    with np.errstate(all="ignore"):
        df_c = cast(float, df_c)  # given with var_c
        larger = ok & (var_s / var_c > stats.f.isf(LARGER_P, np.fmax(df_s, 1), max(df_c, 1)))
        pooled = (np.where(ok, df_s * np.clip(var_s, 0, None), 0.0) + df_c * var_c) / (np.where(ok, df_s, 0) + df_c)
    return np.where(larger, var_s, pooled), np.where(larger, df_s, np.where(ok, df_s, 0) + df_c)


def _within(b: np.ndarray, cls: ClassNoise | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(within spread, its degrees of freedom, the session's own within spread): the session's
    pooled with the class's (``combine``), never below its floor."""
    w_s, w_df = nm.within_spreads(b)
    w2, wdf = combine(w_s ** 2, w_df, cls.within ** 2 if cls else None, cls.within_df if cls else None)
    w = np.fmax(np.sqrt(w2), nm.FLOOR_WITHIN)
    return w, np.where(np.sqrt(w2) >= nm.FLOOR_WITHIN, wdf, np.inf), w_s


def _between(b2_s: np.ndarray, spread: np.ndarray, nc: np.ndarray, mean_w2: np.ndarray,
             cls: ClassNoise | None) -> tuple[np.ndarray, np.ndarray]:
    """(between spread, its degrees of freedom): the session's (``b2_s``: its square), or with a
    class file pooled with the class's unless an F test on the nodes' total spread says the
    session is noisier (a between spread is a small difference of two)."""
    if cls is None:
        b2, bdf = np.clip(np.nan_to_num(b2_s, nan=0.0), 0, None), np.where(np.isfinite(b2_s), nc - 1, np.inf)
    else:
        with np.errstate(all="ignore"):
            expect = mean_w2 + cls.between ** 2
            larger = np.isfinite(b2_s) & (spread ** 2 / expect > stats.f.isf(LARGER_P, np.fmax(nc - 1, 1),
                                                                               max(cls.between_df, 1)))
            ok = np.isfinite(b2_s) & (nc > 1)
            pooled = (np.where(ok, (nc - 1) * b2_s, 0.0) + cls.between_df * cls.between ** 2) / \
                (np.where(ok, nc - 1, 0) + cls.between_df)
        b2 = np.where(larger, b2_s, pooled)
        bdf = np.where(larger, nc - 1, np.where(ok, nc - 1, 0) + cls.between_df)
    bb = np.fmax(np.sqrt(np.clip(b2, 0, None)), nm.FLOOR_BETWEEN)
    return bb, np.where(np.sqrt(np.clip(b2, 0, None)) > nm.FLOOR_BETWEEN, bdf, np.inf)


def _class_shifted(x: np.ndarray, own_w2: np.ndarray, bb: np.ndarray, cls: ClassNoise,
                   bimodal: np.ndarray) -> tuple[np.ndarray, float]:
    """(whether the session's level sits away from the class's centre by more than SHIFT_Z
    standard errors, the class's node count): robust, a slow node does not move the level."""
    n_cls = max(cls.between_df + 1, 2)
    with np.errstate(all="ignore"), nm._quiet():
        level = np.nanmedian(x, axis=-1)
        n_s = np.fmax(np.isfinite(x).sum(axis=-1), 1)
        gap_sd = np.sqrt(np.nanmean(own_w2 + bb ** 2, axis=-1) * (math.pi / 2 / n_s + 1 / n_cls))
    return (np.abs(level - cls.centre) > SHIFT_Z * gap_sd) & ~bimodal, n_cls


def judge(b: np.ndarray, m: np.ndarray | int, alpha: float = nm.ALPHA, min_loss: float = 0.01,
          cls: ClassNoise | None = None, power: float = nm.POWER) -> dict[str, np.ndarray]:
    """One variable of every node (``b``: badness, ``(..., n, k)``, NaN padded) judged against the
    fleet (the module's docstring); ``m``: how many variables each node is judged on.  Arrays of
    shape ``(..., n)`` unless said: value, centre, z, bound, se, loss, df, k, detectable,
    between, flag, judgeable, bimodal ``(...)``, within ``(...)``, within_df ``(...)``."""
    b = np.asarray(b, dtype=float)
    w, wdf, w_s = _within(b, cls)
    raw, k = nm.node_values(b, w)
    x = raw - w[..., None] * nm.by_repeats(k, 0)
    own_w2 = (nm.by_repeats(k, 1) * w[..., None]) ** 2
    with np.errstate(all="ignore"), nm._quiet():
        mean_w2 = np.nanmean(own_w2, axis=-1, keepdims=True)
    c, spread, nc = nm.leave_one_out(x, np.sqrt(mean_w2[..., 0] + nm.FLOOR_BETWEEN ** 2))
    with np.errstate(all="ignore"):
        b2_s = spread ** 2 - mean_w2
    bb, bdf = _between(b2_s, spread, nc, mean_w2, cls)
    few = ~(nc >= MIN_NODES)

    def scored(centre, inflate):
        with np.errstate(all="ignore"):
            a_part, b_part = own_w2 * inflate, bb ** 2 * inflate
            se = np.sqrt(a_part + b_part)
            df = nm.satterthwaite([a_part, b_part], [np.broadcast_to(wdf[..., None], a_part.shape), bdf])
            bound = nm.t_bound(m, alpha / TAIL, df)
            return se, df, bound, (x - centre) / se

    with np.errstate(all="ignore"):
        fleet_inflate = 1 + 1 / nc
    se, df, bound, z = scored(c, fleet_inflate)
    better = (z < -bound) & (-(x - c) >= nm.loss_to_shift(min_loss))
    bimodal = better.sum(axis=-1) >= 2
    judgeable = ~(few | bimodal[..., None]) | (cls is not None)
    shifted = np.zeros(b.shape[:-2], dtype=bool)
    if cls is not None:  # the class's centre where the session sits where the class does
        shifted, n_cls = _class_shifted(x, own_w2, bb, cls, bimodal)
        same = ~shifted[..., None] | few
        c = np.where(same, cls.centre, c)
        se, df, bound, z = scored(c, np.where(same, 1 + 1 / n_cls, fleet_inflate))
    with np.errstate(all="ignore"):
        loss = nm.shift_to_loss(x - c)
        detectable = nm.shift_to_loss((bound + stats.norm.isf(1 - power)) * se)
    flag = judgeable & (z > bound) & (loss >= min_loss) & np.isfinite(x)
    return dict(value=x, centre=c, z=z, bound=bound, se=se, loss=loss, df=df, k=k, detectable=detectable,
                between=bb, flag=flag, judgeable=judgeable & np.isfinite(x), bimodal=bimodal, within=w,
                within_df=wdf, session_within=w_s, session_between=np.sqrt(np.clip(b2_s, 0, None)),
                shifted=shifted)


def repeats_needed(target: float, within: float, between: float, m: int, alpha: float = nm.ALPHA,
                   n: int = 64, power: float = nm.POWER, k_max: int = 64, between_known: bool = True,
                   k_seen: int = 5) -> int | None:
    """The fewest repeats per node with which a fleet of ``n`` nodes sees ``target`` at this noise
    (the within spread estimated from ``n`` nodes of ``k`` repeats; the between spread known, from a
    class file, or ``between_known`` False: estimated from the other nodes), or None where even
    ``k_max`` is not enough.  The constants of ``k`` repeats are scaled from those of ``k_seen``
    (a skipped mean's spread falls as 1 / sqrt(k)): a planning figure, not a verdict."""
    k0 = max(int(k_seen), 2)
    sd0 = nm.value_constants(k0)[1]
    eff0 = nm.within_constants(k0)[1]
    inflate = 1 + 1 / max(n - 1, 1)
    for k in range(2, k_max + 1):
        wdf = eff0 * n * k
        a = (max(within, nm.FLOOR_WITHIN) * sd0 * math.sqrt(k0 / k)) ** 2 * inflate
        bpart = max(between, nm.FLOOR_BETWEEN) ** 2 * inflate
        bdf = math.inf if between_known or between <= nm.FLOOR_BETWEEN else max(n - 2, 1)
        df = nm.satterthwaite([np.array(a), np.array(bpart)], [np.array(wdf), np.array(bdf)])
        bound = float(nm.t_bound(m, alpha / TAIL, df))
        if nm.shift_to_loss((bound + stats.norm.isf(1 - power)) * math.sqrt(a + bpart)) <= target:
            return k
    return None


def class_numbers(b: np.ndarray) -> ClassNoise:
    """A class file's numbers of one variable from a healthy batch's badness ``(n, k)``: its
    pooled within spread, the skipped mean of its nodes' corrected values (the centre) and their
    skipped spread beyond the within part (the between spread), with their degrees of freedom."""
    b = np.asarray(b, dtype=float)
    w_s, w_df = nm.within_spreads(b)
    w = max(float(np.nan_to_num(w_s, nan=0.0)), nm.FLOOR_WITHIN)
    raw, k = nm.node_values(b, w)
    x = raw - w * nm.by_repeats(k, 0)
    ok = np.isfinite(x)
    x, k = x[ok], k[ok]
    if len(x) < MIN_NODES:
        raise ValueError(f"{len(x)} nodes with a value: a class needs at least {MIN_NODES}")
    own = float(np.mean((nm.by_repeats(k, 1) * w) ** 2))
    med = float(np.median(x))
    mad = float(np.median(np.abs(x - med))) / stats.norm.ppf(0.75)
    keep = np.abs(x - med) <= nm.CLIP * max(mad, math.sqrt(own + nm.FLOOR_BETWEEN ** 2))
    centre = float(x[keep].mean())
    var = float(x[keep].var(ddof=1)) / stats.truncnorm.var(-nm.CLIP, nm.CLIP) if keep.sum() > 1 else 0.0
    return ClassNoise(centre=centre, within=w, within_df=float(w_df) if np.isfinite(w_s) else math.inf,
                      between=math.sqrt(max(0.0, var - own)), between_df=float(keep.sum() - 1))
