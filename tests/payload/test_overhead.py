"""The engine's own cost per iteration, measured with an operation and a method that do nothing
(tests/null_engine.py), numpy backend, one rank, against the same calls in a bare Python loop in
the same process: a multiple of what this machine takes for them, never an absolute time (no
test judges this machine's speed).

Bounds:
* inside the timed region (median of the samples), at most TIMED_RATIO x the bare loop's
  median: the timer and the sample's set-up add at most as much as the operation's calls
  themselves; the 2-CPU VM measures 1.0-1.05x (0.15 us against 0.15 us; in absolute terms
  0.21-0.23 us there before, bench/results/2026-11-30-cpu-2core/engine-overhead.txt, within the
  0.5 us margin issue #8 allows host MPI over OSU's C loop at 8 B);
* wall time per iteration, everything included (barrier per sample, timer, statistics,
  output), amortised over 200000 iterations, at most WALL_RATIO x the bare loop's mean: 3-4.5x
  here; what keeps a sweep of thousands of small iterations within the health mode's minute.
"""

import json
from pathlib import Path

TIMED_RATIO = 2.0
WALL_RATIO = 20.0


def test_engine_overhead_per_iteration(mpirun, tmp_path):
    script = (Path(__file__).parents[1] / "null_engine.py")
    out = mpirun.script(1, script, 200000, tmp_path / "null.json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["batch"] == 20
    assert got["timed_us"] < TIMED_RATIO * got["bare_us"], got
    assert got["wall_us"] < WALL_RATIO * got["bare_mean_us"], got
