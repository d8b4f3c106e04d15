"""--budget holds when the warm-up's estimate is wrong: a size whose iterations slow down after
the warm-up (a link that congests, as under the noise check's aggressor) stops once its budget
is spent, after at least engine.BUDGET_MIN_SAMPLES samples, instead of running every iteration."""

import json
import textwrap
from pathlib import Path

from gpucomm.payload.engine import BUDGET_MIN_SAMPLES

TESTS = Path(__file__).resolve().parents[1]  # null_engine.py

SCRIPT = textwrap.dedent('''
    import json, sys, time
    sys.path.insert(0, sys.argv[3])
    from mpi4py import MPI  # noqa: F401
    from null_engine import NullMethod, NullOp
    from gpucomm.payload import engine, methods, ops

    class SlowsDown(NullOp):
        """Fast in the warm-up, then 20 ms an iteration."""
        name = "slows-down"
        calls = 0

        def step(self, size):
            SlowsDown.calls += 1
            if SlowsDown.calls > 2:
                time.sleep(0.02)

    ops.REGISTRY["slows-down"] = SlowsDown
    methods.REGISTRY["null"] = NullMethod
    t0 = time.perf_counter()
    engine.run(engine.RunConfig(op="slows-down", method="null", sizes=[8], iters=1000, warmup=2,
                                batch=1, budget=float(sys.argv[2]), quiet=True, json_path=sys.argv[1],
                                max_bandwidth=0))
    print(json.dumps({"wall_s": time.perf_counter() - t0}))
''')


def test_budget_ends_a_size_that_slows_down_after_the_warm_up(mpirun, tmp_path):
    script = tmp_path / "slow.py"
    script.write_text(SCRIPT)
    out = mpirun.script(1, script, tmp_path / "r.json", 0.3, TESTS)
    assert out.returncode == 0, out.stderr
    rec = json.loads((tmp_path / "r.json").read_text())["results"][0]
    # 1000 iterations of 20 ms would be 20 s; the budget of 0.3 s ends the size after
    # BUDGET_MIN_SAMPLES samples (0.2 s), or the first sample past 0.3 s
    assert BUDGET_MIN_SAMPLES <= rec["samples"] <= 20 and rec["iters"] == rec["samples"], rec
    assert json.loads(out.stdout.strip().splitlines()[-1])["wall_s"] < 5
