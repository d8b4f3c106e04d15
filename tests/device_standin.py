"""The engine with host memory standing in for device buffers (a backend that says it is a
device), so that the GPU-aware-MPI gate can be exercised without a GPU (tests/test_injection.py).
Usage: mpirun -np 2 python device_standin.py OP [SIZES]; the level comes from GPUCOMM_GPU_AWARE_MPI.
Exit status and error line as the payload's (cli.main)."""

import sys

from gpucomm import cli, engine
from gpucomm.backend import NumpyBackend


class StandInDevice(NumpyBackend):
    """Host memory, but is_device: what the methods see decides what they hand to MPI."""
    name = "cupy"
    is_device = True

    def __init__(self, device=None):
        self.device = device

    def pci_bus_id(self):
        return f"standin:{self.device}"

    def describe(self):
        return {"backend": "standin", "device": self.device, "pci_bus_id": self.pci_bus_id(),
                "name": "host memory standing in for a GPU"}


if __name__ == "__main__":
    engine.make_backend = lambda name, device: StandInDevice(device)
    op = sys.argv[1]
    sizes = sys.argv[2] if len(sys.argv) > 2 else "8,4K"
    sys.exit(cli.main([op, "--method", "gpu-aware-mpi", "--backend", "cupy", "--sizes", sizes,
                       "--iters", "10", "--max-bandwidth", "0"]))
