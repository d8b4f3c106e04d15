"""The engine with an operation and a method that do nothing: what the engine itself costs per
iteration (tests/test_overhead.py), and, in the same process, what the operation's own calls
cost in a bare loop (the yardstick: the engine's cost as a multiple of it, whatever this
machine's speed).  Usage: mpirun -np 1 python null_engine.py ITERS JSON"""

import json
import sys
import time

from mpi4py import MPI  # noqa: F401  (MPI_Init before the clock starts)

from gpucomm.payload import engine, methods, ops
from gpucomm.payload.methods.base import Method
from gpucomm.payload.ops.base import Operation


class NullMethod(Method):
    name = "null"
    backends = ("numpy",)

    def send(self, nbytes, peer):
        pass

    def recv(self, nbytes, peer):
        pass


class NullOp(Operation):
    """A ping-pong's calls (one send, one receive per iteration) that move nothing."""
    name = "null"
    min_ranks = 1

    def prepare(self, size):
        pass

    def step(self, size):
        self.method.send(size, 0)
        self.method.recv(size, 0)

    def validate(self, size):
        return None

    def metrics(self, size, time_s):
        return {"goodput_GBps": 0.0, "busbw_GBps": 0.0}


if __name__ == "__main__":
    ops.REGISTRY["null"] = NullOp
    methods.REGISTRY["null"] = NullMethod
    iters, path = int(sys.argv[1]), sys.argv[2]
    t0 = time.perf_counter()
    engine.run(engine.RunConfig(op="null", method="null", sizes=[8], iters=iters, warmup=0,
                                quiet=True, json_path=path, max_bandwidth=0))
    wall = time.perf_counter() - t0
    with open(path) as fp:
        rec = json.load(fp)["results"][0]
    op, batch = NullOp.__new__(NullOp), rec["batch"]
    op.method = NullMethod.__new__(NullMethod)
    bare = []
    for _ in range(iters // batch):  # the timed loop's own calls (Operation.loop), nothing else
        t = time.perf_counter()
        op.loop(8, batch)
        bare.append((time.perf_counter() - t) / batch)
    mean = sum(bare) / len(bare)
    bare.sort()
    print(json.dumps({"timed_us": rec["time_us"]["median"], "batch": batch, "wall_us": wall / iters * 1e6,
                      "bare_us": bare[len(bare) // 2] * 1e6, "bare_mean_us": mean * 1e6}))
