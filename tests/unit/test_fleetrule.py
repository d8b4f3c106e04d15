"""gpucomm.analysis.fleetrule (the fleet rule of gpucomm acceptance) on seeded synthetic fleets
(gpucomm.analysis.fleetsim): the rule's own behaviour; its error rates on real sessions are
bench/studies/replay.py's (tests/unit/test_replay.py runs a fast version)."""

import numpy as np
import pytest

from gpucomm.analysis import fleetrule, fleetsim, statcore as sc


@pytest.mark.parametrize("n,with_class", [(64, False), (6, True)])
def test_a_few_hundred_simulated_fleets_find_the_slow_node_and_drain_no_healthy_one(n, with_class):
    trials = 60 if n == 64 else 100  # 6 nodes: 500 healthy nodes, one false drain 2 per 1000
    r35, r7 = fleetsim.run_trials(5, trials, n, 5, 0.002, [0.035, 0.07], with_class)
    assert r7["detection"] >= 0.9 and r35["detection"] >= 0.7, (r35, r7)
    assert r35["false_per_1000"] <= 3  # loosely: the simulator's rates are claimed nowhere (bench/studies/replay.py's)


def test_a_node_slow_in_most_of_its_repeats_is_slow_and_one_transient_moves_nothing():
    rng = np.random.default_rng(1)
    b = rng.normal(0, 0.01, (16, 5))
    b[3, :3] += sc.loss_to_shift(0.5)     # 50 % slow in 3 of 5 repeats
    b[7, 0] += sc.loss_to_shift(0.3)      # one transient repeat, 30 % slow
    j = fleetrule.judge(b, 10)
    assert list(np.flatnonzero(j.flag)) == [3]
    assert j.loss[3] > 0.4 and abs(j.loss[7]) < 0.01


def test_a_bimodal_measurement_is_out_of_the_rule_and_a_slow_group_is_drained():
    rng = np.random.default_rng(2)
    b = rng.normal(0, 0.01, (16, 5)) + np.where(rng.random((16, 5)) < 0.5, sc.loss_to_shift(0.3), 0.0)
    j = fleetrule.judge(b, 10)
    assert not j.judgeable and j.why.startswith("bimodal measurement") and not j.flag.any()
    group = rng.normal(0, 0.01, (8, 5))
    group[:5] += sc.loss_to_shift(0.5)    # 5 of 8 nodes 50 % slow in every repeat: a slow group
    j = fleetrule.judge(group, 10)
    assert j.judgeable and list(np.flatnonzero(j.flag)) == [0, 1, 2, 3, 4]


def test_a_small_batch_is_judged_on_its_repeats_not_on_a_between_spread_of_two_degrees_of_freedom():
    """The issue's GPU cluster: 4 nodes, ggn3 10 % slow on an all-reduce goodput measured at 1.6 %
    within a node; judged from the pooled repeats it is drained, where a between spread from 3
    other nodes (2 degrees of freedom) saw nothing."""
    rng = np.random.default_rng(3)
    b = rng.normal(0, 0.016, (4, 5))
    b[2] += sc.loss_to_shift(0.10)
    j = fleetrule.judge(b, 6)
    assert list(np.flatnonzero(j.flag)) == [2] and j.between_source.startswith("none")


def test_a_loss_below_the_practical_minimum_drains_nothing_whatever_its_z():
    rng = np.random.default_rng(4)
    b = rng.normal(0, 0.001, (16, 5))
    b[0] += sc.loss_to_shift(0.015)
    assert fleetrule.judge(b, 10, min_loss=0.02).z[0] > 10
    assert not fleetrule.judge(b, 10, min_loss=0.02).flag.any()
    assert fleetrule.judge(b, 10, min_loss=0.01).flag[0]


def test_a_class_file_of_another_level_is_not_its_centre():
    rng = np.random.default_rng(4)
    cls = fleetrule.class_numbers(fleetsim.fleet(rng, 1, 64, 10, 0.01, 0.002)[0])
    assert len(cls.pool) > 100 and len(cls.values) == 64
    b = fleetsim.fleet(rng, 1, 8, 5, 0.01, 0.002)[0] + 0.05  # the whole batch 5 % slower than the class
    j = fleetrule.judge(b, 30, cls=cls)
    assert j.shifted and not j.flag.any()


def test_the_confirmation_is_distribution_free():
    """A node whose median lies inside the other nodes' repeats is not drained, whatever its z:
    the tail of the pool, not a normal one, decides."""
    rng = np.random.default_rng(5)
    b = rng.normal(0, 0.01, (6, 5))
    j = fleetrule.judge(b, 1)
    assert (j.tail > 0.05).all() and not j.flag.any()
    b[0] += 0.2
    j = fleetrule.judge(b, 1)
    assert j.tail[0] < 0.01 and j.flag[0]
