"""The fast version of bench/studies/replay.py (the committed benchmark of the verdicts on real sessions:
bench/results/2026-12-04-cpu-2core/51-replay): the reference node's 26 healthy health sessions
dealt out as a fleet and as nights, through acceptance.evaluate and drift.judge_measurements."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from gpucomm.analysis import acceptance, drift

REPO = Path(__file__).resolve().parents[2]
#: the replay of the committed real sessions (bench/results): outside the unit tier
pytestmark = pytest.mark.committed


@pytest.fixture(scope="module")
def replay():
    spec = importlib.util.spec_from_file_location("replay", REPO / "bench" / "studies" / "replay.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["replay"] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod, mod.load_pool("x2")


def test_real_healthy_fleets_drain_nothing_and_the_injected_losses_are_found(replay):
    mod, pool = replay
    rng = np.random.default_rng(5)
    quiet = mod.quiet_keys(pool)
    assert len(pool.runs) == 26 and len(quiet) >= 10
    for trial in range(3):
        order = mod.deal(pool, 16, 5, rng)
        v = acceptance.evaluate(*mod.fleet_frames(pool, order))
        assert not v.drain and not acceptance.not_judged(v), [r["reason"] for r in v.drain]
        for kind in mod.INJECTIONS:
            key = quiet[trial] if kind == "step" else None
            v = acceptance.evaluate(*mod.fleet_frames(pool, order, (kind, key)))
            assert {r["node"] for r in v.drain} == {"n0"}, (kind, key, [r["reason"] for r in v.drain])


def test_real_nights_of_one_device_call_and_a_step_found_by_the_second_night(replay):
    mod, pool = replay
    rng = np.random.default_rng(6)
    quiet = mod.quiet_keys(pool)
    alarms = judged = 0
    for trial in range(3):
        order = mod.night_orders(pool, rng, within_call=True)
        d = drift.judge_measurements(mod.night_frames(pool, order), [])
        late = d.table[d.table["night"] >= drift.MIN_NIGHTS]
        judged += late["night"].nunique()
        alarms += late.loc[late["status"] == "FAIL", "night"].nunique()
        key = quiet[trial]
        d = drift.judge_measurements(mod.night_frames(pool, order[:len(order)], (key, len(order) - 2)), [])
        test, var = key.split("\t")
        row = d.latest[(d.latest["test"] == test) & (d.latest["var"] == var)]
        assert row["status"].item() == "FAIL", row.T
    assert alarms <= 1, f"{alarms} of {judged} healthy nights failed (the benchmark: about 1 in 150)"
