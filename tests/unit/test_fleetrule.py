"""gpucomm.analysis.fleetrule (the fleet rule of gpucomm acceptance) on seeded synthetic fleets
(gpucomm.analysis.fleetsim): the CI's fast version of the committed benchmark
(bench/results/2026-12-03-cpu-2core/40-fleet-verdict-synthetic, 20000 trials per row)."""

import numpy as np
import pytest

from gpucomm.analysis import fleetrule, fleetsim, noisemodel as nm


@pytest.mark.parametrize("n,with_class", [(64, False), (6, True)])
def test_a_few_hundred_fleets_find_the_slow_node_and_drain_no_healthy_one(n, with_class):
    trials = 300 if n == 64 else 600
    r35, r7 = fleetsim.run_trials(5, trials, n, 5, 0.002, [0.035, 0.07], with_class)
    print(r35, r7)
    assert r7["detection"] >= 0.98 and r35["detection"] >= 0.95
    assert r35["false_per_1000"] <= 2.5  # the benchmark (20000 trials) measures it under 1; a few hundred: loosely


def test_the_within_spread_is_unbiased_with_slow_repeats_among_them():
    rng = np.random.default_rng(3)
    for n, k in ((6, 5), (64, 5), (64, 3)):
        b = fleetsim.fleet(rng, 400, n, k, 0.01, 0.0)
        w, df = nm.within_spreads(b)
        assert np.median(w) / 0.01 == pytest.approx(1.0, abs=0.06)
        assert np.all(df > 0)


def test_a_class_file_of_another_level_is_not_its_centre():
    rng = np.random.default_rng(4)
    cls = fleetrule.class_numbers(fleetsim.fleet(rng, 1, 64, 10, 0.01, 0.002)[0])
    b = fleetsim.fleet(rng, 50, 8, 5, 0.01, 0.002) + 0.05  # the whole batch 5 % slower than the class
    r = fleetrule.judge(b, 30, cls=cls)
    assert r["shifted"].all() and not r["flag"].any()


def test_repeats_needed_says_what_a_noisy_variable_needs():
    assert fleetrule.repeats_needed(0.035, 0.01, 0.002, 30, n=64) <= 5
    assert fleetrule.repeats_needed(0.035, 0.05, 0.002, 30, n=64) is None
    assert fleetrule.repeats_needed(0.035, 0.01, 0.002, 30, n=6, between_known=False) > 5
