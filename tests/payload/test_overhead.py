"""The engine's own cost per iteration, measured with an operation and a method that do nothing
(tests/null_engine.py), numpy backend, one rank.

Bounds:
* inside the timed region, 0.5 us per iteration (median of the samples): that is the margin
  issue #8 allows host MPI over OSU's C loop at 8 B, so the engine alone must not eat it; this
  2-CPU VM measures 0.21-0.23 us (three Python calls per iteration, batch of 20;
  bench/results/2026-11-30-cpu-2core/engine-overhead.txt);
* wall time per iteration, everything included (barrier per sample, timer, statistics,
  output), 3 us amortised over 200000 iterations: 0.38-0.49 us here; what keeps a sweep of
  thousands of small iterations within the health mode's minute.
"""

import json
from pathlib import Path

import pytest

TIMED_BOUND_US = 0.5
WALL_BOUND_US = 3.0


@pytest.mark.alone
def test_engine_overhead_per_iteration(mpirun, tmp_path):
    script = (Path(__file__).parents[1] / "null_engine.py")
    out = mpirun.script(1, script, 200000, tmp_path / "null.json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["batch"] == 20
    assert got["timed_us"] < TIMED_BOUND_US, got
    assert got["wall_us"] < WALL_BOUND_US, got
