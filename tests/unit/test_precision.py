"""gpucomm.metrics' precision of a median (median_ci_ranks, block_count, rel_halfwidth,
median_precision_us): the interval's coverage on known distributions, the blocks, few samples."""

import math

import numpy as np
import pytest

from gpucomm.metrics import (
    EXACT_CI_MAX,
    MIN_BLOCKS,
    block_count,
    median_ci_ranks,
    median_precision_us,
    rel_halfwidth,
)


def binomial_coverage(n, lo, hi):
    """The exact coverage of [x_(lo+1), x_(hi+1)] (0-based ranks lo, hi) for the median."""
    below = sum(math.comb(n, k) for k in range(lo + 1)) / 2 ** n
    above = sum(math.comb(n, k) for k in range(n - hi)) / 2 ** n
    return 1 - below - above


@pytest.mark.parametrize("n", [6, 9, 10, 20, 37, 50, 100, 333, 1000])
def test_the_exact_interval_is_the_narrowest_symmetric_one_of_95_percent(n):
    lo, hi = median_ci_ranks(n)
    assert lo + hi == n - 1  # symmetric
    assert binomial_coverage(n, lo, hi) >= 0.95
    assert binomial_coverage(n, lo + 1, hi - 1) < 0.95


def test_known_ranks():
    # Conover's table: n = 10 -> x_(2), x_(9); n = 100 -> x_(40), x_(61) (1-based)
    assert median_ci_ranks(10) == (1, 8)
    assert median_ci_ranks(100) == (39, 60)


def test_the_normal_ranks_above_the_exact_range_join_it():
    n = EXACT_CI_MAX + 1
    lo, hi = median_ci_ranks(n)
    elo, ehi = median_ci_ranks(EXACT_CI_MAX)
    assert abs(lo - elo) <= 1 and abs(hi - ehi) <= 1
    assert binomial_coverage(n, lo, hi) >= 0.95
    for n in (5000, 100000):
        lo, hi = median_ci_ranks(n)
        assert n / 2 - lo == pytest.approx(1.96 * math.sqrt(n) / 2, abs=2)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_few_samples_give_the_widest_interval(n):
    assert median_ci_ranks(n) == (0, n - 1)
    with pytest.raises(ValueError):
        median_ci_ranks(0)


@pytest.mark.parametrize("draw", [
    lambda rng, n: rng.normal(10, 1, n),
    lambda rng, n: rng.lognormal(0, 1, n),           # skewed
    lambda rng, n: 5 + rng.exponential(1, n),        # a latency's long tail
    lambda rng, n: np.where(rng.random(n) < 0.3, 50.0, 40.0) + rng.normal(0, 1, n),  # bimodal
])
@pytest.mark.parametrize("n", [15, 60, 1500])
def test_coverage_on_known_distributions(draw, n):
    rng = np.random.default_rng(52)
    truth = np.median(draw(rng, 400000))
    hits, trials = 0, 600
    for _ in range(trials):
        t = draw(rng, n)
        p = median_precision_us(t * 1e-6, 5)
        hits += p["ci95"][0] <= truth <= p["ci95"][1]
    # 95 % or more (an exact interval is conservative); 3 binomial standard errors of slack
    assert hits / trials >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / trials)


def test_block_count():
    assert [block_count(n) for n in (1, 2, 3, 4, 9, 10, 11, 1000)] == [1, 1, 1, 2, 4, 5, 5, 5]
    assert block_count(10) == MIN_BLOCKS


def test_block_medians_see_a_step_the_interval_does_not_weigh():
    """A burst: one block of ten runs 10 % slower.  The median's interval barely moves; the
    blocks' spread says so and rel_se takes it."""
    rng = np.random.default_rng(1)
    t = np.concatenate([rng.normal(100, 0.1, 500), rng.normal(110, 0.1, 100),
                        rng.normal(100, 0.1, 400)]) * 1e-6
    p = median_precision_us(t, 10)
    medians = [np.median(b) for b in np.array_split(t * 1e6, 10)]
    assert p["blocks"] == 10 and p["samples"] == 1000
    assert p["block_spread"] == pytest.approx(float(np.std(np.log(medians), ddof=1)))
    assert p["block_spread"] > 0.02
    assert p["ci95"][1] / p["ci95"][0] < 1.01
    assert p["rel_se"] == pytest.approx(p["block_spread"] / math.sqrt(10))
    steady = median_precision_us(rng.normal(100, 0.1, 1000) * 1e-6, 10)
    assert steady["block_spread"] < 0.001
    width = (math.log(steady["ci95"][1]) - math.log(steady["ci95"][0])) / (2 * 1.96)
    assert steady["rel_se"] == pytest.approx(max(width, steady["block_spread"] / math.sqrt(10)))


def test_fields_units_and_edge_cases():
    t = np.arange(1, 101) * 1e-6  # 1..100 us
    p = median_precision_us(t, 5)
    assert p["ci95"] == [40.0, 61.0]
    assert p["p10"] == pytest.approx(np.percentile(np.arange(1, 101), 10))
    assert p["ci95"][0] <= np.median(t) * 1e6 <= p["ci95"][1]
    one = median_precision_us([2e-6], 5)
    assert one["samples"] == 1 and one["blocks"] == 1 and one["block_spread"] is None
    assert one["ci95"] == [2.0, 2.0] and one["rel_se"] == 0.0
    two = median_precision_us([1e-6, 3e-6], 5)  # blocks cannot outnumber the samples
    assert two["blocks"] == 2 and two["ci95"] == [1.0, 3.0]


def test_rel_halfwidth():
    assert rel_halfwidth([5.0]) == 0.0
    assert rel_halfwidth(np.arange(1, 101, dtype=float)) == pytest.approx((61 - 40) / 2 / 50.5)
    rng = np.random.default_rng(3)
    assert rel_halfwidth(rng.normal(100, 1, 10000)) < rel_halfwidth(rng.normal(100, 1, 100))
