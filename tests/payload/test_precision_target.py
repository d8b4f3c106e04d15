"""Sampling to a target (engine._to_target): after a size's iterations, blocks are added while the
median's interval is wider than its target and the size's cap is not spent; the record says
what stopped it and carries the median's precision (metrics.median_precision_us)."""

import json
import textwrap
from pathlib import Path

import pytest

from gpucomm.contract import (
    PREC_BLOCKS,
    PREC_CI,
    PREC_SAMPLES,
    PREC_STOPPED,
    PRECISION_FIELD,
    STOP_CAP,
    STOP_ITERS,
    STOP_TARGET,
)

TESTS = Path(__file__).resolve().parents[1]  # null_engine.py

SCRIPT = textwrap.dedent('''
    import json, random, sys, time
    sys.path.insert(0, sys.argv[2])
    from mpi4py import MPI  # noqa: F401
    from null_engine import NullMethod, NullOp
    from gpucomm.payload import engine, methods, ops

    class Steady(NullOp):
        """50 us of busy work an iteration."""
        name = "steady"

        def step(self, size):
            end = time.perf_counter() + 50e-6
            while time.perf_counter() < end:
                pass

    class Noisy(NullOp):
        """0 to 400 us of busy work an iteration, at random: no interval of 1 % in 0.2 s."""
        name = "noisy"

        def step(self, size):
            end = time.perf_counter() + random.random() * 400e-6
            while time.perf_counter() < end:
                pass

    ops.REGISTRY.update(steady=Steady, noisy=Noisy)
    methods.REGISTRY["null"] = NullMethod
    op, target, budget = sys.argv[3], float(sys.argv[4]), float(sys.argv[5]) or None
    t0 = time.perf_counter()
    engine.run(engine.RunConfig(op=op, method="null", sizes=[8], iters=20, warmup=2, batch=1,
                                budget=budget, precision_target=None if target < 0 else target,
                                quiet=True, json_path=sys.argv[1], max_bandwidth=0))
    print(json.dumps({"wall_s": time.perf_counter() - t0}))
''')


def run(mpirun, tmp_path, op, target, budget):
    script = tmp_path / "target.py"
    script.write_text(SCRIPT)
    out = mpirun.script(1, script, tmp_path / "r.json", TESTS, op, target, budget)
    assert out.returncode == 0, out.stderr
    rec = json.loads((tmp_path / "r.json").read_text())["results"][0]
    return rec, json.loads(out.stdout.strip().splitlines()[-1])["wall_s"]


def check_precision(rec):
    prec = rec[PRECISION_FIELD]
    assert prec[PREC_SAMPLES] == rec["samples"] and prec[PREC_BLOCKS] >= 5
    low, high = prec[PREC_CI]
    assert low <= rec["time_us"]["median"] <= high
    return prec


@pytest.mark.parametrize("budget", [0, 0.3])
def test_a_noisy_size_runs_to_its_cap_and_no_further(mpirun, tmp_path, budget):
    rec, wall = run(mpirun, tmp_path, "noisy", 0.01, budget)
    prec = check_precision(rec)
    assert prec[PREC_STOPPED] == STOP_CAP
    cap = budget or 0.1  # constants.PRECISION_CAP_S without --budget
    timed_s = rec["samples"] * rec["time_us"]["mean"] * 1e-6
    assert rec["samples"] > 20 and 0.5 * cap < timed_s < cap + 0.05, rec
    assert rec["wall_s"] < cap + 1.0


def test_a_steady_size_stops_at_its_target(mpirun, tmp_path):
    rec, _ = run(mpirun, tmp_path, "steady", 0.05, 0)
    prec = check_precision(rec)
    # 20 samples may be enough already (iters) or a few blocks more (target); never the cap
    assert prec[PREC_STOPPED] in (STOP_ITERS, STOP_TARGET)
    low, high = prec[PREC_CI]
    assert (high - low) / 2 <= 0.05 * rec["time_us"]["median"]


def test_no_target_runs_the_iterations_only(mpirun, tmp_path):
    rec, _ = run(mpirun, tmp_path, "noisy", 0, 0)
    prec = check_precision(rec)
    assert prec[PREC_STOPPED] == STOP_ITERS and rec["samples"] == 20 and prec[PREC_BLOCKS] == 5
