"""gpucomm.analysis.statcore, the statistics core every "is it slower?" uses: direction, centre,
spread, bound, modes, tail; and its committed constants regenerated."""

import csv
import math

import numpy as np
import pytest

from gpucomm.analysis import fleetrule, statcore as sc
from gpucomm.contract import HIGHER_IS_WORSE, LOWER_IS_WORSE


@pytest.mark.parametrize("unit,lower,upper,sign", [
    ("us", None, None, HIGHER_IS_WORSE), ("GB/s", None, None, LOWER_IS_WORSE),
    ("x", None, None, HIGHER_IS_WORSE),                     # the noise check's slowdown ratio
    ("widgets", None, 0.2, HIGHER_IS_WORSE), ("widgets", -0.1, None, LOWER_IS_WORSE)])
def test_a_direction_is_declared_once(unit, lower, upper, sign):
    assert sc.worse_sign(unit, lower, upper) == sign


def test_an_unknown_direction_is_said():
    with pytest.raises(sc.UnknownDirection):
        sc.worse_sign("widgets")
    assert not sc.lower_is_better("widgets")


def test_badness_and_loss():
    assert sc.badness([2.0], HIGHER_IS_WORSE)[0] == pytest.approx(math.log(2))
    assert sc.badness([2.0], LOWER_IS_WORSE)[0] == pytest.approx(-math.log(2))
    assert np.isnan(sc.badness([0.0, -1.0, np.nan], LOWER_IS_WORSE)).all()
    assert sc.shift_to_loss(sc.loss_to_shift(0.035)) == pytest.approx(0.035)


def test_centre_and_spread_skip_a_far_value():
    rng = np.random.default_rng(1)
    x = rng.normal(size=5001)
    assert sc.spread(x) == pytest.approx(1.0, rel=0.04)
    assert sc.location(np.append(x, 1e6)) == pytest.approx(sc.location(x), abs=0.01)
    assert sc.location([1.0, 1.1, 0.9, 10.0, 1.0], 0.1) == pytest.approx(1.0)


@pytest.mark.parametrize("k", [2, 3, 5, 8])
def test_the_within_spread_is_unbiased_and_robust(k):
    rng = np.random.default_rng(k)
    b = rng.normal(0, 0.01, (400, 16, k))
    b[:, 0] += 0.2  # a slow node: its own residuals
    w, df = sc.within_arrays(b)
    assert np.median(w) / 0.01 == pytest.approx(1.0, abs=0.05)
    assert np.all(df > 0)


def test_the_location_sd_is_the_committed_one():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((40000, 5))
    assert np.std(sc.location(x, 1.0)) == pytest.approx(sc.location_sd(5), rel=0.03)


def test_the_committed_constants_are_what_the_simulation_gives():
    """The table statcore reads (gpucomm/data/statcore_constants.csv) regenerated: the same seeds,
    the same numbers (python -m gpucomm.analysis.statcore writes it)."""
    with open(sc.CONSTANTS_FILE) as fp:
        table = {int(r["k"]): r for r in csv.DictReader(fp)}
    assert sorted(table) == list(range(1, sc.K_TABLE + 1))
    for row in sc.constants_table(ks=(1, 2, 3, 5, 12, sc.K_TABLE)):
        for col in sc.CONSTANT_COLUMNS[1:]:
            want, got = float(table[row["k"]][col]), row[col]
            assert (math.isnan(want) and math.isnan(got)) or got == pytest.approx(want, rel=1e-5), (row["k"], col)


def test_bound_is_students_t_with_bonferroni():
    assert sc.bound(1e-3, 10) == pytest.approx(sc.bound(1e-4, 1))
    assert sc.bound(1e-3, 1, 5) > sc.bound(1e-3, 1, 50) > sc.bound(1e-3, 1)
    with pytest.raises(ValueError):
        sc.bound(0.0, 1)


def test_modes_tell_a_bimodal_measurement_from_transients_and_a_slow_node():
    rng = np.random.default_rng(2)
    bimodal = rng.normal(0, 0.01, (16, 5)) + np.where(rng.random((16, 5)) < 0.5, 0.3, 0.0)
    assert sc.modes(bimodal, sc.within(bimodal).value).measurement
    transient = rng.normal(0, 0.01, (16, 5))
    transient[rng.random((16, 5)) < 0.02] += 0.2
    assert not sc.modes(transient, sc.within(transient).value).measurement
    slow_half = rng.normal(0, 0.01, (16, 5))
    slow_half[0, :3] += 0.7
    assert not sc.modes(slow_half, sc.within(slow_half).value).measurement


def test_the_best_split_of_unimodal_values_is_no_slow_group():
    """Ashman's D of the best split is large for unimodal samples too (statcore.MODES_D_SMALL)."""
    rng = np.random.default_rng(3)
    for n in (8, 25, 80, 320):
        found = sum(sc.slow_group(rng.lognormal(0, 0.01, n), 0.0).any() for _ in range(300))
        assert found <= 3, n


def test_the_tail_is_a_binomial_count_of_the_pool():
    pool = np.arange(100.0)
    assert sc.tail_p(-1.0, 5, pool) == pytest.approx(1.0)
    assert sc.tail_p(1000.0, 1, pool) == pytest.approx(1 / 101)
    p = 1 / 101
    assert sc.tail_p(1000.0, 5, pool) == pytest.approx(sum(math.comb(5, i) * p ** i * (1 - p) ** (5 - i)
                                                           for i in range(3, 6)))
    assert sc.tail_p(1000.0, 2, pool) == pytest.approx((1 / 101) ** 2)


def test_a_node_without_values_changes_neither_the_within_spread_nor_the_modes():
    """A node that measured nothing on a variable (its check failed there) is a row of NaN: it
    weighs nothing, rather than making the spread NaN and so the whole variable "bimodal"."""
    rng = np.random.default_rng(5)
    b = rng.normal(0, 0.01, (6, 5))
    with_gap = np.vstack([b, np.full(5, np.nan)])
    assert sc.within(with_gap) == sc.within(b)
    assert not sc.modes(with_gap, sc.within(b).value).measurement
    j = fleetrule.judge(with_gap, 1)
    assert j.judgeable and not j.flag.any(), j.why
