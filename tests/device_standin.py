"""The engine with host memory standing in for device buffers (a backend that says it is a
device), so that device-only paths run without a GPU: the GPU-aware-MPI gate
(tests/test_injection.py; the level comes from GPUCOMM_GPU_AWARE_MPI) and the engine's graph
path (a "graph" that replays the captured steps; tests/test_payload.py).
Usage: mpirun -np 2 python device_standin.py OP [SIZES] [graph] (STANDIN_ARGS: more options)
Exit status and error line as the payload's (cli.main)."""

import os
import shlex
import sys

from gpucomm.payload import cli, engine, methods
from gpucomm.payload.backend import NumpyBackend
from gpucomm.payload.methods.host import HostMethod


class ReplayGraph:
    """What capture() returns here: launching it runs the captured steps again."""

    def __init__(self, steps):
        self.steps, self.launches = steps, 0

    def launch(self, stream=None):
        self.launches += 1
        self.steps()


class GraphedHost(HostMethod):
    """Host MPI, declared graph-capable: the engine's graph path over the stand-in backend."""
    name = "graphed-host"
    backends = ("cupy",)
    graph_capable = True


class StandInDevice(NumpyBackend):
    """Host memory, but is_device: what the methods see decides what they hand to MPI."""
    name = "cupy"
    is_device = True

    def __init__(self, device=None):
        self.device = device

    stream = None

    def capture(self, steps):
        return ReplayGraph(steps)

    def pci_bus_id(self):
        return f"standin:{self.device}"

    def describe(self):
        return {"backend": "standin", "device": self.device, "pci_bus_id": self.pci_bus_id(),
                "name": "host memory standing in for a GPU"}


if __name__ == "__main__":
    engine.make_backend = lambda name, device: StandInDevice(device)
    methods.REGISTRY["graphed-host"] = GraphedHost
    op = sys.argv[1]
    sizes = sys.argv[2] if len(sys.argv) > 2 else "8,4K"
    graph = sys.argv[3:] == ["graph"]
    if graph:
        cli.METHODS = tuple(cli.METHODS) + ("graphed-host",)
    sys.exit(cli.main([op, "--method", "graphed-host" if graph else "gpu-aware-mpi", "--backend", "cupy",
                       "--sizes", sizes, "--iters", "40", "--max-bandwidth", "0"]
                      + shlex.split(os.environ.get("STANDIN_ARGS", ""))))
