"""``gpu-aware-mpi``: device buffers handed straight to MPI (CUDA-/ROCm-aware MPI).

Its ping-pong and bw loops are host's. On device buffers they stay mpi4py's under --loop auto:
the compiled loop (payload.fastloop, --loop numba-mpi) hands MPI the device address as mpi4py
does and makes the calls osu_latency -d cuda makes, but is slower there at 8 B (16.4-19.1 us
against mpi4py's 10.0-10.5 us between the two GPUs of an H200 node)."""

from ...constants import (
    ALLREDUCE,
    ALLTOALL,
    BW,
    GPU_AWARE_FULL,
    GPU_AWARE_LEVELS,
    GPU_AWARE_MPI,
    GPU_AWARE_P2P,
    LOOP_NUMBA_MPI,
    MULTI_PINGPONG,
    PAIR_MATRIX,
    PINGPONG,
)
from ...errors import CapabilityError
from ..capabilities import gpu_aware_mpi
from .host import HostMethod

#: why --loop auto keeps mpi4py's loop on device buffers (see the module's docstring)
NOT_COMPILED_DEVICE = ("device buffers: the compiled loop measured slower at 8 B than mpi4py's "
                       "(--loop numba-mpi forces it)")

#: what each operation needs from the MPI (see capabilities.gpu_aware_mpi); others: full
NEEDED = {PINGPONG: GPU_AWARE_P2P, BW: GPU_AWARE_P2P, MULTI_PINGPONG: GPU_AWARE_P2P,
          PAIR_MATRIX: GPU_AWARE_P2P, ALLREDUCE: GPU_AWARE_FULL, ALLTOALL: GPU_AWARE_FULL}
#: a level's place in GPU_AWARE_LEVELS (none < p2p < full)
_RANK = {level: i for i, level in enumerate(GPU_AWARE_LEVELS)}


class GpuAwareMpiMethod(HostMethod):
    name = GPU_AWARE_MPI
    backends = ("cupy", "numpy")

    def not_compiled(self):
        if self.be.is_device and self.ctx.loop != LOOP_NUMBA_MPI:
            return NOT_COMPILED_DEVICE
        return None

    def check_capability(self):
        ctx = self.ctx
        if self.be.is_device:
            level, why = gpu_aware_mpi(ctx.MPI.Get_library_version())
            # every rank must agree, or one rank would hand device memory to MPI and crash
            level = GPU_AWARE_LEVELS[ctx.comm.allreduce(_RANK[level], op=ctx.MPI.MIN)]
            need = NEEDED.get(ctx.op_name, GPU_AWARE_FULL)
            if _RANK[level] < _RANK[need]:
                what = " for collectives on device buffers" if need == GPU_AWARE_FULL else ""
                raise CapabilityError(f"MPI is not GPU-aware{what} (level {level}): {why}")
            self.gpu_aware_mpi = f"{level} ({why})"

    def prepare(self, nbytes):
        self.be.synchronize()  # kernels that filled the buffers must be done before MPI reads them
        super().prepare(nbytes)
