"""The fleet rule of ``gpucomm acceptance``, on arrays: one variable's repeats of every node in
(badness, gpucomm.analysis.statcore; nodes x repeats, NaN padded), a ``Judgement`` out.  The
verdict (gpucomm.analysis.acceptance) and its benchmarks (bench/studies/replay.py on real sessions,
gpucomm.analysis.fleetsim on simulated ones) call the same function, so the rates they measure are
the verdict's.

For one variable:

* **two modes** (statcore.modes): where single nodes' repeats straddle two separated modes the
  variable is a bimodal *measurement*: out of the rule (``judgeable`` False, said once); where whole
  nodes sit in the slow mode they are a slow *group*, judged against the faster group;
* **within** spread ``W``: the session's pooled estimate (statcore.within, with its degrees of
  freedom), with a class file pooled with the class's unless an F test says the session is
  noisier (``combine``); never below the floor;
* a node's **value**: statcore.location of its repeats at ``W`` (a transient repeat is skipped, a
  node slow in most repeats is slow); its own variance in ``z``: ``W``'s share for its k repeats,
  never below the runs' own declared standard errors (``run_se``, statcore.own_variance: it only
  widens a node's standard error; the between spread, the centre and the bound's degrees of
  freedom are the repeats' own, as without it);
* the **centre** of each node: the location of the *other* nodes' values (the class file's centre
  where the session sits where the class does);
* the **between** spread: the other nodes' spread beyond their within part, counted only where an
  F test (``BETWEEN_P``) says the nodes differ beyond their repeats (a between spread of a few
  nodes is a guess: with none detectable a small batch is judged on its repeats, whose degrees of
  freedom are many); a class file's, from many nodes, otherwise;
* ``z``: the value's distance above the centre in standard errors (own repeats, between, centre's
  error); flagged where ``z`` is above statcore.bound at ``alpha / (TAIL m)``, the loss is at least
  the variable's ``min_loss`` (a practical floor: a smaller loss drains nothing whatever its z),
  **and** the distribution-free tail confirms it (statcore.tail_p of the node's lower median
  against the other nodes' repeats, or the class file's, at most ``alpha / TAIL``: a healthy node
  that bad that often from the pool alone, no normal tail assumed; with too few repeats to say
  that, beyond every one of them), or else its ranks do (a one-sided Mann-Whitney test of all its
  repeats against that pool at the same level: a node slow in every repeat whose median a heavy
  tail of the pool holds);
* ``detectable``: the loss found with probability POWER at that bound and standard error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from . import statcore as sc

#: the bound is set at ``alpha / (TAIL * m)``: transient slowdowns of one to three within spreads
#: (kept in a node's value) make the far tail of healthy nodes' z heavier than the normal one
TAIL = 2.0
#: fewer other nodes than this and no class file: no fleet centre to judge a node against
MIN_NODES = 2
#: ... where no node has 2 repeats (no within-node spread: the other nodes' spread is all there is)
MIN_NODES_ONE_REPEAT = 3
#: the F test's level above which nodes are taken to differ beyond their repeats (a between spread)
BETWEEN_P = 0.01
#: a class file's spread is replaced by the session's where an F test says the session is noisier
LARGER_P = 1e-3
#: the distribution-free confirmation: a flag stands where a healthy node's lower median would be
#: this bad at most ``alpha / TAIL`` of the time (statcore.tail_p against the other nodes' repeats),
#: or, where so few repeats cannot say that, where it is beyond every one of them
#: a session whose level is this many standard errors from the class file's centre is judged
#: against its own nodes (``shifted``)
SHIFT_Z = 3.0
#: the most quantiles of a healthy batch's repeats a class file keeps (its empirical distribution)
CLASS_POOL = 1001


@dataclass(frozen=True)
class ClassNoise:
    """A variable's numbers from a class file (``gpucomm tolerances --fleet --class``): the healthy
    batch's centre, within and between spreads with their degrees of freedom, its nodes and the
    empirical distribution it showed: the node values and quantiles of its repeats (badness)."""
    centre: float
    within: float
    within_df: float
    between: float
    between_df: float
    nodes: int = 0
    values: tuple[float, ...] = ()
    pool: tuple[float, ...] = ()


@dataclass
class Judgement:
    """One variable judged: per node (arrays) value, centre, z, bound, se, loss, df, k,
    detectable, tail (statcore.tail_p), flag, run_se (the root mean square of its repeats' own
    standard errors, NaN unknown); per variable the spreads it was judged at, whether it
    could be judged at all (``why`` not: a bimodal measurement, too few nodes) and its modes."""
    value: np.ndarray
    centre: np.ndarray
    z: np.ndarray
    bound: np.ndarray
    se: np.ndarray
    loss: np.ndarray
    df: np.ndarray
    k: np.ndarray
    detectable: np.ndarray
    tail: np.ndarray
    flag: np.ndarray
    within: float
    within_df: float
    between: float
    between_source: str
    session_within: float
    judgeable: bool
    why: str = ""
    shifted: bool = False
    modes: sc.Modes | None = None
    notes: list[str] = field(default_factory=list)
    run_se: np.ndarray | None = None

    @property
    def has(self) -> np.ndarray:
        return np.isfinite(self.value)

    def sees(self) -> float:
        """The loss this variable finds with probability POWER, the median over its nodes."""
        d = self.detectable[self.has & np.isfinite(self.detectable)]
        return float(np.median(d)) if len(d) else math.nan


def combine(var_s: float, df_s: float, var_c: float | None, df_c: float | None) -> tuple[float, float, bool]:
    """(variance, degrees of freedom, the session's own) of a spread known from the session and
    maybe a class file: the session's where it is larger beyond chance (an F test at LARGER_P:
    the node class has changed, or this batch is noisier), else the two pooled."""
    if var_c is None or not var_c > 0 or df_c is None:
        return (var_s if math.isfinite(var_s) else 0.0), (df_s if math.isfinite(var_s) else math.inf), True
    if not (math.isfinite(var_s) and df_s > 0):
        return var_c, df_c, False
    if var_s / var_c > stats.f.isf(LARGER_P, max(df_s, 1), max(df_c, 1)):
        return var_s, df_s, True
    return (df_s * var_s + df_c * var_c) / (df_s + df_c), df_s + df_c, False


def _others(x: np.ndarray, ref: np.ndarray, sd: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centre, spread, count) for each node of the reference nodes' values without it: their
    skipped mean and skipped standard deviation, the skip decided once over all reference nodes
    (linear in the nodes; a slow node beyond the skip is in no centre)."""
    with sc._quiet():
        xs = x[ref & np.isfinite(x)]
        med = float(np.median(xs)) if len(xs) else math.nan
        s = max(float(sc.mad(xs)) if len(xs) > 1 else 0.0, sd, sc.FLOOR)
        keep = ref & np.isfinite(x) & (np.abs(x - med) <= sc.CLIP * s)
        d = np.where(keep, x - med, 0.0)
        s1, s2, n = d.sum(), (d ** 2).sum(), keep.sum()
        ni = n - keep
        mean = (s1 - d) / ni
        var = (s2 - d ** 2 - ni * mean ** 2) / (ni - 1) / sc.TRUNC_VAR
    return med + mean, np.sqrt(np.clip(var, 0, None)), ni.astype(float)


def _tail(b: np.ndarray, k: np.ndarray, ref: np.ndarray, cls: ClassNoise | None, use_class: bool
          ) -> tuple[np.ndarray, np.ndarray]:
    """(statcore.tail_p of each node's lower median against the other reference nodes' repeats, or the
    class file's pool; the smallest it can be: a node beyond the whole pool)."""
    med = np.asarray(sc.lower_median(b))
    kk = np.clip(k, 1, None)
    need = sc.tail_need(kk)
    if use_class and cls is not None and len(cls.pool):
        pool = np.asarray(cls.pool)
        best = stats.binom.sf(need - 1, kk, 1 / (len(pool) + 1))
        return np.asarray(sc.tail_p(med, k, pool)), best
    pool = np.sort(b[ref][np.isfinite(b[ref])])
    above_all = len(pool) - np.searchsorted(pool, med, side="left")
    own = (np.isfinite(b) & (b >= med[:, None]) & ref[:, None]).sum(axis=1)
    n_pool = np.clip(len(pool) - np.where(ref, np.isfinite(b).sum(axis=1), 0), 0, None)
    p = (above_all - own + 1) / (n_pool + 1)
    best = stats.binom.sf(need - 1, kk, 1 / (n_pool + 1))
    return np.where(np.isfinite(med) & (k > 0), stats.binom.sf(need - 1, kk, p), np.nan), best


def _rank_p(b: np.ndarray, which: np.ndarray, ref: np.ndarray, cls: ClassNoise | None, use_class: bool
            ) -> np.ndarray:
    """For the nodes ``which``: the one-sided Mann-Whitney p that a node's repeats are worse than
    the other reference nodes' (or the class file's pool); 1 for the rest.  Every repeat counts:
    a node slow in all its repeats, where a heavy tail of the pool leaves its median inside it."""
    out = np.ones(b.shape[0])
    for i in np.flatnonzero(which):
        own = b[i][np.isfinite(b[i])]
        pool = np.asarray(cls.pool) if use_class and cls is not None and len(cls.pool) else \
            b[ref & (np.arange(b.shape[0]) != i)].ravel()
        pool = pool[np.isfinite(pool)]
        if len(own) and len(pool):
            out[i] = float(stats.mannwhitneyu(own, pool, alternative="greater", method="asymptotic").pvalue)
    return out


def judge(b: np.ndarray, m: np.ndarray | int, alpha: float = sc.ALPHA, min_loss: float = 0.02,
          cls: ClassNoise | None = None, power: float = sc.POWER, loss_test: bool = True,
          confirm: bool = True, run_se: np.ndarray | None = None) -> Judgement:
    """One variable of every node (``b``: badness, nodes x repeats, NaN padded) judged against the
    fleet (the module's docstring); ``m``: how many variables each node is judged on;
    ``loss_test`` False: no min_loss (a variable whose badness is no logarithm, e.g. the node
    score of acceptance); ``confirm`` False: no distribution-free confirmation (a screening,
    whose flags are suspects to retest); ``run_se``: each repeat's own standard error of its
    badness (like ``b``, NaN unknown), a floor of each node's variance (statcore.own_variance)."""
    b = np.asarray(b, dtype=float)
    n = b.shape[0]
    k = np.isfinite(b).sum(axis=1)
    w_s = sc.within(b)
    w2, wdf, own_w = combine(w_s.value ** 2, w_s.df, cls.within ** 2 if cls else None, cls.within_df if cls else None)
    w = max(math.sqrt(w2), sc.FLOOR)
    wdf = wdf if math.sqrt(w2) >= sc.FLOOR else math.inf
    x = np.where(k > 0, np.asarray(sc.location(b, np.full(n, w)), dtype=float) if n else np.zeros(0), np.nan)
    own_var = (sc.location_sd(k) * w) ** 2
    modes = sc.modes(b, w)
    ref = np.isfinite(x) & ~sc.slow_group(x, min_loss)
    c, spread, nc = _others(x, ref, math.sqrt(np.nanmean(own_var[ref]) + sc.FLOOR ** 2) if ref.any() else w)
    mean_own = float(np.nanmean(own_var[ref])) if ref.any() else w2
    bb, bdf, b_src = _between(spread, nc, mean_own, wdf, cls)
    shifted = cls is not None and _class_shifted(x, ref, mean_own, bb, cls)
    use_class = cls is not None and not shifted
    if use_class and cls is not None:
        c, nc = np.full(n, cls.centre), np.full(n, float(max(cls.nodes, cls.between_df + 1, 2)))
    with sc._quiet():
        centre_var = (mean_own + bb ** 2) / nc
        b_part = np.full(n, bb ** 2) + centre_var
        se = np.sqrt(sc.own_variance(k, w, run_se) + b_part)  # the bound's df: the estimated spreads'
        df = sc.satterthwaite([own_var, b_part], [np.full(n, wdf), np.full(n, bdf)])
        bnd = sc.bound(alpha / TAIL, np.broadcast_to(np.clip(m, 1, None), (n,)), df)
        z = (x - c) / se
        loss = sc.shift_to_loss(x - c)
        detectable = sc.detectable_loss(se, bnd, power)
    tail, best = _tail(b, k, ref, cls, use_class)
    level = np.fmax(alpha / TAIL, best * (1 + 1e-9))
    few, repeats = _few(w_s.value, k, nc, use_class)
    judgeable, why = _judgeable(modes, few, x, repeats)
    confirmed = _confirmed(b, tail <= level, z > bnd, ref, cls, use_class, alpha) if confirm \
        else np.ones(n, dtype=bool)
    flag = (judgeable & ~few & (z > bnd) & confirmed & np.isfinite(x)
            & ((loss >= min_loss) if loss_test else True))
    return Judgement(value=x, centre=c, z=z, bound=bnd, se=se, loss=loss, df=df, k=k,
                     detectable=np.where(few, np.nan, detectable), tail=tail, flag=flag, within=w,
                     within_df=wdf, between=bb, between_source=b_src, session_within=w_s.value,
                     judgeable=judgeable, why=why, shifted=shifted, modes=modes,
                     run_se=np.sqrt(sc.run_variance(run_se, n)))


def _few(within: float, k: np.ndarray, nc: np.ndarray, use_class: bool) -> tuple[np.ndarray, bool]:
    """(the nodes with too few others to be judged without a class file, whether every node has
    repeats): a node of one repeat has no spread of its own, and among such nodes a node needs
    MIN_NODES_ONE_REPEAT others (a within spread from other nodes' repeats says nothing of theirs)."""
    repeats = math.isfinite(within) and bool((k[k > 0] >= 2).all())
    return (nc < (MIN_NODES if repeats else MIN_NODES_ONE_REPEAT)) & (not use_class), repeats


def _confirmed(b: np.ndarray, by_tail: np.ndarray, beyond: np.ndarray, ref: np.ndarray,
               cls: ClassNoise | None, use_class: bool, alpha: float) -> np.ndarray:
    """Which nodes the distribution-free confirmation holds: the count of the median (``by_tail``)
    or, where it does not confirm a node beyond its bound, the node's ranks against the pool."""
    maybe = ~by_tail & beyond & np.isfinite(b).any(axis=1)
    return by_tail | (_rank_p(b, maybe, ref, cls, use_class) <= np.fmax(alpha / TAIL, 0.0))


def _judgeable(modes: sc.Modes, few: np.ndarray, x: np.ndarray, repeats: bool) -> tuple[bool, str]:
    """(whether the variable can be judged, why not)."""
    if modes.measurement:
        return False, (f"bimodal measurement: {modes.share:.0%} of the repeats, in {modes.straddle} of "
                       f"{modes.groups} nodes, lie beyond {sc.CLIP:g} within spreads of their node's median"
                       + (f" (two modes {modes.gap:.0%} apart)" if math.isfinite(modes.gap) else ""))
    if not (~few & np.isfinite(x)).any():
        return False, ("too few nodes and no class file (--class)" if repeats else
                       f"one repeat a node (no within-node spread) and fewer than {MIN_NODES_ONE_REPEAT + 1} "
                       "nodes, no class file (--class)")
    return True, ""


def _between(spread: np.ndarray, nc: np.ndarray, mean_own: float, wdf: float,
             cls: ClassNoise | None) -> tuple[float, float, str]:
    """(between spread, its degrees of freedom, where it comes from): a class file's (pooled with
    the session's unless the session is noisier); else the session's where an F test says its
    nodes differ beyond their repeats; else none (the floor)."""
    with sc._quiet():
        fin = np.isfinite(spread) & (nc >= 2)
        s2 = float(np.median(spread[fin] ** 2)) if fin.any() else math.nan
        n_c = float(np.median(nc[fin])) if fin.any() else 0.0
    b2_s = max(0.0, s2 - mean_own) if math.isfinite(s2) else math.nan
    if cls is not None and cls.between_df > 0:
        # the session's between spread where its nodes spread more than the class's would (an F
        # test of the total spreads: a between spread is a small difference of two), else pooled
        expect = mean_own + cls.between ** 2
        if math.isfinite(s2) and n_c >= 2 and expect > 0 and \
                s2 / expect > stats.f.isf(LARGER_P, max(n_c - 1, 1), max(cls.between_df, 1)):
            return max(math.sqrt(b2_s), sc.FLOOR), n_c - 1, "session nodes"
        ok = math.isfinite(b2_s) and n_c >= 2
        v = ((n_c - 1) * b2_s if ok else 0.0) + cls.between_df * cls.between ** 2
        d = (n_c - 1 if ok else 0.0) + cls.between_df
        bb = max(math.sqrt(v / d), sc.FLOOR)
        return bb, (d if bb > sc.FLOOR else math.inf), "class file"
    if math.isfinite(s2) and n_c >= 3 and mean_own > 0 and \
            s2 / mean_own > stats.f.isf(BETWEEN_P, n_c - 1, max(wdf if math.isfinite(wdf) else 1e6, 1)):
        return max(math.sqrt(b2_s), sc.FLOOR), n_c - 1, "session nodes"
    return sc.FLOOR, math.inf, "none detected (floor)"


def _class_shifted(x: np.ndarray, ref: np.ndarray, mean_own: float, bb: float, cls: ClassNoise) -> bool:
    """Whether the session's level sits away from the class file's centre by more than SHIFT_Z
    standard errors (robust: the median of the nodes' values)."""
    xs = x[ref & np.isfinite(x)]
    if not len(xs):
        return False
    n_cls = max(cls.nodes, cls.between_df + 1, 2)
    gap_sd = math.sqrt((mean_own + bb ** 2) * (math.pi / 2 / len(xs) + 1 / n_cls))
    return abs(float(np.median(xs)) - cls.centre) > SHIFT_Z * gap_sd


def class_numbers(b: np.ndarray) -> ClassNoise:
    """A class file's numbers of one variable from a healthy batch's badness (nodes x repeats):
    its within spread, the location of its nodes' values (the centre) and their spread beyond the
    within part (the between spread), with degrees of freedom; its node values and the quantiles
    of its repeats (its empirical distribution).  ValueError for fewer than 3 nodes or a spread
    that is not a number."""
    b = np.asarray(b, dtype=float)
    w_s = sc.within(b)
    w = max(w_s.value if math.isfinite(w_s.value) else 0.0, sc.FLOOR)
    k = np.isfinite(b).sum(axis=1)
    x = np.asarray(sc.location(b, np.full(b.shape[0], w)), dtype=float)
    ok = np.isfinite(x) & (k > 0)
    if ok.sum() < 3:
        raise ValueError(f"{int(ok.sum())} nodes with a value: a class needs at least 3")
    xs = x[ok]
    own = float(np.mean((sc.location_sd(k[ok]) * w) ** 2))
    total = sc.spread(xs)
    between = math.sqrt(max(0.0, (total if math.isfinite(total) else 0.0) ** 2 - own))
    pool = np.quantile(b[np.isfinite(b)], np.linspace(0, 1, min(CLASS_POOL, int(np.isfinite(b).sum()))))
    within_df = w_s.df if math.isfinite(w_s.value) and w_s.df > 0 else math.inf
    out = ClassNoise(centre=float(sc.location(xs)), within=w, within_df=float(within_df), between=between,
                     between_df=float(ok.sum() - 1), nodes=int(ok.sum()),
                     values=tuple(float(v) for v in xs), pool=tuple(float(v) for v in pool))
    if not all(math.isfinite(v) for v in (out.centre, out.within, out.between)):
        raise ValueError("a spread or centre that is not a number")
    return out
