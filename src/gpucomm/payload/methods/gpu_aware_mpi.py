"""``gpu-aware-mpi``: device buffers handed straight to MPI (CUDA-/ROCm-aware MPI).

Its ping-pong and bw loops are host's. On device buffers they stay mpi4py's under --loop auto:
the compiled loop (payload.fastloop, --loop numba-mpi) hands MPI the device address as mpi4py
does and makes the calls osu_latency -d cuda makes, but measured slower at 8 B on the 2x H200
node (16.4-19.1 us against 10.0-10.5 us; bench/results 19-nvshmem-bw)."""

from ..capabilities import gpu_aware_mpi
from ...errors import CapabilityError
from .host import HostMethod
from ...constants import LOOP_NUMBA_MPI

#: why --loop auto keeps mpi4py's loop on device buffers (see the module's docstring)
NOT_COMPILED_DEVICE = ("device buffers: the compiled loop measured slower at 8 B than mpi4py's "
                       "(--loop numba-mpi forces it)")

# what each operation needs from the MPI (see capabilities.gpu_aware_mpi)
NEEDED = {"pingpong": "p2p", "bw": "p2p", "multi-pingpong": "p2p", "pair-matrix": "p2p", "allreduce": "full", "alltoall": "full"}
_RANK = {"none": 0, "p2p": 1, "full": 2}


class GpuAwareMpiMethod(HostMethod):
    name = "gpu-aware-mpi"
    backends = ("cupy", "numpy")

    def not_compiled(self):
        if self.be.is_device and getattr(self.ctx, "loop", None) != LOOP_NUMBA_MPI:
            return NOT_COMPILED_DEVICE
        return None

    def check_capability(self):
        ctx = self.ctx
        if self.be.is_device:
            level, why = gpu_aware_mpi(ctx.MPI.Get_library_version())
            # every rank must agree, or one rank would hand device memory to MPI and crash
            level = ("none", "p2p", "full")[ctx.comm.allreduce(_RANK[level], op=ctx.MPI.MIN)]
            need = NEEDED.get(ctx.op_name, "full")
            if _RANK[level] < _RANK[need]:
                what = " for collectives on device buffers" if need == "full" else ""
                raise CapabilityError(f"MPI is not GPU-aware{what} (level {level}): {why}")
            self.why = f"{level} ({why})"

    def prepare(self, nbytes):
        self.be.synchronize()  # kernels that filled the buffers must be done before MPI reads them
        super().prepare(nbytes)
