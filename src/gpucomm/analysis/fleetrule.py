"""The fleet rule of ``gpucomm acceptance``, on arrays: one variable's repeats of every node in, each
node's z, bound, loss and flag out.  The verdict (gpucomm.analysis.acceptance) and its benchmark
(gpucomm.analysis.fleetsim) call the same function, so the error rates the benchmark measures are
the verdict's.

For one variable (badness, gpucomm.analysis.noisemodel; nodes x repeats, NaN padded; leading axes
are independent fleets):

* within spread ``W``: the session's pooled estimate (``within_spreads``, with its degrees of
  freedom), or the class file's where that is larger, never below ``FLOOR_WITHIN``;
* node value: the skipped mean of its repeats, its bias for its ``k`` taken out;
* centre and between spread of each node: the skipped mean and spread of the *other* nodes
  (``leave_one_out``); the between spread ``B`` is that spread beyond its within part, or the
  class file's where larger, never below ``FLOOR_BETWEEN``;
* standard error ``se``: ``sqrt((sd(k)^2 W^2 + B^2) (1 + 1/n_centre))``, its degrees of freedom
  by Welch-Satterthwaite from the session's estimates (a class file's number counts as known
  with its own, a floor as known);
* bound: Student's t at ``alpha / (TAIL m)`` (Bonferroni over the node's ``m`` variables) with those
  degrees of freedom; flagged where ``z > bound`` and the node's loss is at least ``min_loss``;
* detectable loss: the loss found with probability ``POWER`` at that bound and standard error.

Where fewer than ``MIN_NODES`` other nodes remain, or the fleet is bimodal (at least two nodes
*better* than the centre beyond the bound: the centre is then a slow group), the class file's
centre is the centre; without a class file such a variable cannot be judged (``judgeable``
False, ``bimodal`` True where that is the reason).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from . import noisemodel as nm

#: the bound is set at ``alpha / (TAIL * m)``: transient slowdowns of one to three within spreads
#: (kept in a node's value) make the far tail of healthy nodes' z heavier than the normal one the
#: bound assumes; the synthetic benchmark measured 1.4 false drains per 1000 healthy nodes at
#: TAIL 1 (64 nodes, k = 5, --alpha 1e-3), under --alpha with TAIL 2 (docs/acceptance.md)
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


def judge(b: np.ndarray, m: int, alpha: float = nm.ALPHA, min_loss: float = 0.01,
          cls: ClassNoise | None = None, power: float = nm.POWER) -> dict[str, np.ndarray]:
    """One variable of every node (``b``: badness, ``(..., n, k)``, NaN padded) judged against the
    fleet (the module's docstring); ``m``: how many variables each node is judged on.  Arrays of
    shape ``(..., n)`` unless said: value, centre, z, bound, se, loss, df, k, detectable,
    between, flag, judgeable, bimodal ``(...)``, within ``(...)``, within_df ``(...)``."""
    b = np.asarray(b, dtype=float)
    w_s, w_df = nm.within_spreads(b)
    w = np.fmax(np.nan_to_num(w_s, nan=0.0), nm.FLOOR_WITHIN)
    wdf = np.where(np.isfinite(w_s) & (w_s >= nm.FLOOR_WITHIN), w_df, np.inf)
    if cls is not None and cls.within > 0:
        larger = cls.within >= w
        wdf = np.where(larger, cls.within_df, wdf)
        w = np.fmax(w, cls.within)
    raw, k = nm.node_values(b, w)
    x = raw - w[..., None] * nm.by_repeats(k, 0)
    sdk = nm.by_repeats(k, 1)
    own_w2 = (sdk * w[..., None]) ** 2
    with np.errstate(all="ignore"), nm._quiet():
        mean_w2 = np.nanmean(own_w2, axis=-1, keepdims=True)
    sd_pred = np.sqrt(mean_w2[..., 0] + nm.FLOOR_BETWEEN ** 2)
    c, spread, nc = nm.leave_one_out(x, sd_pred)
    with np.errstate(all="ignore"):
        b_s = np.sqrt(np.clip(spread ** 2 - mean_w2, 0, None))
    bdf = np.where(np.isfinite(b_s) & (b_s > nm.FLOOR_BETWEEN), nc - 1, np.inf)
    bb = np.fmax(np.nan_to_num(b_s, nan=0.0), nm.FLOOR_BETWEEN)
    if cls is not None and cls.between > 0:
        bdf = np.where(cls.between >= bb, cls.between_df, bdf)
        bb = np.fmax(bb, cls.between)
    with np.errstate(all="ignore"):
        inflate = 1 + 1 / nc
        a_part, b_part = own_w2 * inflate, bb ** 2 * inflate
        se = np.sqrt(a_part + b_part)
        df = nm.satterthwaite([a_part, b_part], [np.broadcast_to(wdf[..., None], a_part.shape), bdf])
        bound = nm.t_bound(m, alpha / TAIL, df)
        z = (x - c) / se
    few = ~(nc >= MIN_NODES)
    better = (z < -bound) & (-(x - c) >= nm.loss_to_shift(min_loss))
    bimodal = better.sum(axis=-1) >= 2
    use_class = few | bimodal[..., None]
    judgeable = ~use_class | (cls is not None)
    if cls is not None:
        se_c = np.sqrt(own_w2 + bb ** 2 + (cls.between ** 2 + cls.within ** 2) / max(cls.between_df, 1))
        z_c = (x - cls.centre) / se_c
        bound_c = nm.t_bound(m, alpha / TAIL, np.fmin(cls.within_df, cls.between_df))
        c = np.where(use_class, cls.centre, c)
        se = np.where(use_class, se_c, se)
        z = np.where(use_class, z_c, z)
        bound = np.where(use_class, bound_c, bound)
        df = np.where(use_class, np.fmin(cls.within_df, cls.between_df), df)
    with np.errstate(all="ignore"):
        shift = x - c
        loss = nm.shift_to_loss(shift)
        detectable = nm.shift_to_loss((bound + stats.norm.isf(1 - power)) * se)
    flag = judgeable & (z > bound) & (loss >= min_loss) & np.isfinite(x)
    return dict(value=x, centre=c, z=z, bound=bound, se=se, loss=loss, df=df, k=k, detectable=detectable,
                between=bb, flag=flag, judgeable=judgeable & np.isfinite(x), bimodal=bimodal, within=w,
                within_df=wdf, session_within=w_s, session_between=b_s)


def repeats_needed(target: float, within: float, between: float, m: int, alpha: float = nm.ALPHA,
                   n: int = 64, power: float = nm.POWER, k_max: int = 64, between_known: bool = True) -> int | None:
    """The fewest repeats per node with which a fleet of ``n`` nodes sees ``target`` at this noise
    (the within spread estimated from ``n`` nodes of ``k`` repeats; the between spread known, from a
    class file, or ``between_known`` False: estimated from the other nodes), or None where even
    ``k_max`` is not enough."""
    inflate = 1 + 1 / max(n - 1, 1)
    for k in range(2, k_max + 1):
        _, eff = nm.within_constants(k)
        wdf = eff * n * (k - (k % 2))
        a = (max(within, nm.FLOOR_WITHIN) * nm.value_constants(k)[1]) ** 2 * inflate
        bpart = max(between, nm.FLOOR_BETWEEN) ** 2 * inflate
        bdf = math.inf if between_known or between <= nm.FLOOR_BETWEEN else max(n - 2, 1)
        df = nm.satterthwaite([np.array(a), np.array(bpart)], [np.array(wdf), np.array(bdf)])
        bound = float(nm.t_bound(m, alpha / TAIL, df))
        if nm.shift_to_loss((bound + stats.norm.isf(1 - power)) * math.sqrt(a + bpart)) <= target:
            return k
    return None
