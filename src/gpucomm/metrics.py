"""Every bandwidth formula of the project, written once.

Units: GB/s = 1e9 bytes/s, times in microseconds.

* goodput (the paper's definition, De Sensi et al. SC24, Sec. 3):
    - ping-pong:        S / t,            t = half round trip
    - bw (osu_bw):      S / t,            t = one window's time / window (per message)
    - multi ping-pong:  S * P / t         (P concurrent pairs per node; per-node aggregate)
    - all-to-all:       S * (n - 1) / t   (S = block sent to each peer)
    - all-reduce:       S / t             (S = vector size; not doubled)
    - pair matrix, one pair i-j (ops/pairmatrix.py):
        pair-uni:   S / t   (ping-pong i -> j, t = half round trip)
        pair-bidir: 2 S / t (i and j send S to each other at once, t = one exchange: the
                    pair's goodput, both directions; per direction it is S / t)
  (each operation's formulas are its declaration's, constants.OPERATION_DECLS' Bandwidths)
* algbw and busbw (nccl-tests' definitions, doc/PERFORMANCE.md):
    - algbw = buffer bytes / t, buffer = S for all-reduce and send/recv, S * n for all-to-all
    - busbw = algbw * 2(n-1)/n for all-reduce, algbw * (n-1)/n for all-to-all,
      algbw for send/recv (ping-pong, bw); for the multi ping-pong (no nccl-tests counterpart) the
      bytes all P pairs move per second, algbw * P, what the two nodes' links carry;
      for the pair matrix S / t, what one direction of the pair's link carries (the guard
      compares it with one link's nominal bandwidth, both modes alike).
* a GPU's own data paths (ops/datapaths.py, datapath_GBps), S bytes each way in t:
    - h2d, d2h: goodput = busbw = S / t (busbw: one direction of the GPU's host link);
    - bidir: goodput 2 S / t, busbw = direction = S / t;
    - local (device -> device in one GPU's memory): goodput S / t (as nvbandwidth's
      device_local_copy), hbm = 2 S / t (bytes read plus written), busbw 0 (no host link)
* the aggressor (ops/aggressor.py), a whole run of sustained traffic: bytes moved / elapsed
  (goodput: every rank's sends; busbw: one rank's, what its link carries)
"""

import math

from .constants import OPERATION_DECLS

GB = 1e9


def bandwidths(op):
    """``op``'s formulas (constants.OPERATION_DECLS: an operation's, or one of its record modes')."""
    for decl in OPERATION_DECLS:
        if decl.name == op and decl.bandwidths is not None:
            return decl.bandwidths
        for mode, formulas in decl.modes:
            if mode == op:
                return formulas
    raise ValueError(f"unknown operation {op!r}")


def goodput_GBps(op, size, time_s, nranks, pairs=1):
    """The paper's goodput of one operation of ``size`` bytes that took ``time_s`` seconds."""
    moved = bandwidths(op).goodput(size, nranks, pairs)
    if time_s <= 0:
        return float("inf")
    return moved / time_s / GB


def datapath_GBps(direction, size, time_s):
    """A data path's figures (h2d, d2h, bidir, local; see the module's docstring)."""
    one = size / time_s / GB if time_s > 0 else float("inf")
    if direction == "bidir":
        return {"goodput_GBps": 2 * one, "busbw_GBps": one, "direction_GBps": one}
    if direction == "local":
        return {"goodput_GBps": one, "busbw_GBps": 0.0, "hbm_GBps": 2 * one}
    return {"goodput_GBps": one, "busbw_GBps": one}


def aggressor_GBps(moved_bytes, elapsed_s):
    """What a sustained run moved per second: ``moved_bytes`` over ``elapsed_s``."""
    return moved_bytes / elapsed_s / GB if elapsed_s > 0 else 0.0


def algbw_GBps(op, size, time_s, nranks):
    """nccl-tests' algorithm bandwidth."""
    return bandwidths(op).buffer(size, nranks, 1) / time_s / GB


def busbw_GBps(op, size, time_s, nranks, pairs=1):
    """nccl-tests' bus bandwidth (multi ping-pong: all pairs together)."""
    formulas = bandwidths(op)
    return formulas.buffer(size, nranks, pairs) / time_s / GB * formulas.bus(nranks, pairs)


def time_stats_us(times_s):
    """Median, spread and percentiles (numpy's linear interpolation) of per-iteration times."""
    # imported here: the checks' ReFrame sessions import this module (native/nccltests.py) and
    # use none of numpy, which cost a small dry run 0.90 CPU-s instead of 0.69 (median of 5)
    # (bench/results/2026-12-03-cpu-2core/44-ci-timings/numpy-in-session.log)
    import numpy as np
    t = np.asarray(times_s, dtype=np.float64) * 1e6
    return {
        "median": float(np.median(t)),
        "mean": float(t.mean()),
        "min": float(t.min()),
        "max": float(t.max()),
        "p05": float(np.percentile(t, 5)),
        "p95": float(np.percentile(t, 95)),
    }


#: the z of a two-sided 95 % interval
Z95 = 1.96
#: time-ordered blocks a size's samples are cut into, where samples allow (two samples a block
#: at least: fewer samples, fewer blocks)
MIN_BLOCKS, MIN_BLOCK_SAMPLES = 5, 2
#: samples up to which the median's interval is the exact binomial one (normal ranks above)
EXACT_CI_MAX = 1000


def median_ci_ranks(n):
    """(lo, hi), 0-based ranks in the sorted sample of ``n`` values bounding the median's 95 %
    confidence interval, distribution-free (order statistics: the count of values below the
    median is Binomial(n, 1/2)).  Exact up to EXACT_CI_MAX (the narrowest symmetric pair of ranks
    whose coverage is at least 95 %, the widest, min and max, where none is), the normal
    approximation n/2 -/+ 1.96 sqrt(n)/2 above it, rounded outwards."""
    if n < 1:
        raise ValueError("no samples")
    if n > EXACT_CI_MAX:
        half = Z95 * math.sqrt(n) / 2
        return max(0, math.floor(n / 2 - half) - 1), min(n - 1, math.ceil(n / 2 + half) - 1)
    # B ~ Bin(n, 1/2) values below the median: the interval [x_(j), x_(n-j+1)] (1-based) misses
    # it with probability 2 P(B <= j - 1); the largest j with that at most 5 %
    log_half_n = n * math.log(0.5)
    cdf, j = 0.0, 1
    for k in range(n // 2):
        cdf += math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + log_half_n)
        if 2 * cdf > 1 - 0.95:
            break
        j = k + 1
    return j - 1, n - j


def block_count(samples):
    """Time-ordered blocks for ``samples`` samples: MIN_BLOCKS where each holds MIN_BLOCK_SAMPLES,
    fewer (one at least) where samples do not allow it."""
    return max(1, min(MIN_BLOCKS, samples // MIN_BLOCK_SAMPLES))


def rel_halfwidth(times):
    """Half the width of the median's 95 % interval over the median (0 for one value)."""
    import numpy as np
    t = np.sort(np.asarray(times, dtype=np.float64))
    lo, hi = median_ci_ranks(len(t))
    median = float(np.median(t))
    return (t[hi] - t[lo]) / 2 / median if median > 0 else float("inf")


def median_precision_us(times_s, blocks):
    """The precision of the median of per-iteration times (seconds, in time order) cut into
    ``blocks`` time-ordered blocks (numpy's array_split): samples, blocks, ci95 ([low, high],
    us: median_ci_ranks), p10 (us), block_spread (sd of the log of the block medians, None with
    fewer than two blocks) and rel_se (the standard error of the log of the median: the
    interval's width in log over 2 x 1.96, or block_spread / sqrt(blocks) where larger, so that
    bursts that move whole blocks count)."""
    import numpy as np
    t = np.asarray(times_s, dtype=np.float64) * 1e6
    n = len(t)
    blocks = max(1, min(int(blocks), n))
    lo, hi = median_ci_ranks(n)
    ordered = np.sort(t)
    low, high = float(ordered[lo]), float(ordered[hi])
    medians = np.array([np.median(b) for b in np.array_split(t, blocks)])
    spread = float(np.std(np.log(medians), ddof=1)) if blocks > 1 and medians.min() > 0 else None
    rel_se = (np.log(high) - np.log(low)) / (2 * Z95) if low > 0 else float("inf")
    if spread is not None:
        rel_se = max(rel_se, spread / np.sqrt(blocks))
    return {"samples": n, "blocks": blocks, "ci95": [low, high],
            "p10": float(np.percentile(t, 10)), "block_spread": spread, "rel_se": float(rel_se)}


def busbw_is_goodput(op, size, nranks):
    """Whether nccl-tests' bus bandwidth and the paper's goodput of ``op`` are one number by
    construction (all-to-all: S (n-1) / t both; all-reduce on 2 ranks, where 2(n-1)/n is 1): a
    perf variable of one beside the other is a copy (rfm.base.copied_points)."""
    try:
        return math.isclose(busbw_GBps(op, size, 1.0, nranks), goodput_GBps(op, size, 1.0, nranks))
    except ValueError:  # an operation without the paper's goodput
        return False

