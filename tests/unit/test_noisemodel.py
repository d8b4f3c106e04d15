"""gpucomm.analysis.noisemodel: the shared noise model of the verdicts, on seeded synthetic data."""

import math

import numpy as np
import pytest

from gpucomm.analysis import noisemodel as nm


def test_badness_is_higher_for_worse_and_nan_for_non_measurements():
    assert nm.badness([2.0], "us")[0] > nm.badness([1.0], "us")[0]
    assert nm.badness([1.0], "GB/s")[0] > nm.badness([2.0], "GB/s")[0]
    assert np.isnan(nm.badness([0.0, -1.0, float("nan"), float("inf")], "GB/s")).all()


def test_a_loss_is_the_same_shift_for_a_rate_and_a_time():
    shift = nm.loss_to_shift(0.035)
    assert nm.badness([0.965], "GB/s")[0] - nm.badness([1.0], "GB/s")[0] == pytest.approx(shift)
    assert nm.badness([1 / 0.965], "us")[0] - nm.badness([1.0], "us")[0] == pytest.approx(shift)
    assert nm.shift_to_loss(shift) == pytest.approx(0.035)


def test_a_transiently_slow_repeat_does_not_move_a_node_value():
    good = list(np.random.default_rng(1).normal(0, 0.01, 4))
    assert nm.node_value(good + [0.3], within=0.01) == pytest.approx(np.mean(good))
    assert nm.node_value(good + [0.3]) <= max(good)                  # best half, no within spread


@pytest.mark.parametrize("n,k", [(6, 5), (64, 5), (64, 3)])
def test_within_spread_recovers_the_noise_with_slow_repeats_among_them(n, k):
    rng = np.random.default_rng(n * 100 + k)
    est = []
    for _ in range(200):
        groups = rng.normal(0, 0.01, (n, k))
        groups[rng.random((n, k)) < 0.02] += 0.2                     # 2 % of repeats 20 % slow
        est.append(nm.within_spread(groups)[0] / 0.01)
    assert np.median(est) == pytest.approx(1.0, abs=0.08)


def test_between_spread_and_the_healthy_false_alarm_rate():
    """A healthy fleet of 64 nodes x 5 repeats x 30 variables: nodes whose z passes the
    Bonferroni bound are at most about alpha per node (here: none in 200 nodes' worth)."""
    rng = np.random.default_rng(7)
    alarms = 0
    bound = nm.z_bound(30)
    for _trial in range(200 // 64 + 1):
        zmax = np.full(64, -np.inf)
        for _v in range(30):
            x = rng.normal(0, 0.002, (64, 1)) + rng.normal(0, 0.01, (64, 5))
            w, _ = nm.within_spread(x)
            vals = np.array([nm.corrected(nm.node_value(r, w), 5, w) for r in x])
            b = nm.between_spread(vals, [5] * 64, w)
            se = nm.standard_error(5, w, b, 63)
            for i in range(64):
                c, _ = nm.centre(np.delete(vals, i), se)
                zmax[i] = max(zmax[i], (vals[i] - c) / se)
        alarms += int((zmax > bound).sum())
    assert alarms == 0


def test_detectable_loss_and_repeats_needed():
    bound = nm.z_bound(30)
    se = nm.standard_error(5, 0.01, 0.002)
    assert 0.02 < nm.detectable_loss(se, bound) < 0.035
    assert nm.repeats_needed(0.035, 0.01, 0.002, bound) <= 5
    assert nm.repeats_needed(0.035, 0.05, 0.002, bound, k_max=12) is None  # 5 % noise: not at any k <= 12
    assert math.isclose(nm.z_bound(1, 0.5), 0.0, abs_tol=1e-12)
    with pytest.raises(ValueError):
        nm.z_bound(0)
