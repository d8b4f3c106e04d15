"""gpucomm: GPU-to-GPU communication benchmarks and ReFrame checks.

The payload (``python -m gpucomm``) measures one operation (ping-pong, all-reduce, ...)
with one method (host MPI, trivial staging, GPU-aware MPI, CUDA/HIP IPC copy, NCCL/RCCL),
the four ways of moving data between GPUs that De Sensi et al. (SC24) compared.
"""

__version__ = "0.1.0"

METHODS = ("host", "staging", "gpu-aware-mpi", "ipc-copy", "ccl")
