"""``gpu-aware-mpi``: device buffers handed straight to MPI (CUDA-/ROCm-aware MPI)."""

from ..capabilities import gpu_aware_mpi
from ..errors import CapabilityError
from .host import HostMethod


class GpuAwareMpiMethod(HostMethod):
    name = "gpu-aware-mpi"
    backends = ("cupy", "numpy")

    def __init__(self, ctx):
        super().__init__(ctx)
        if self.be.is_device:
            ok, why = gpu_aware_mpi(ctx.MPI.Get_library_version())
            # every rank must agree, or one rank would hand device memory to MPI and crash
            ok = ctx.comm.allreduce(1 if ok else 0, op=ctx.MPI.MIN) == 1
            if not ok:
                raise CapabilityError(f"MPI is not GPU-aware: {why}")
            self.why = why

    def prepare(self, nbytes):
        self.be.synchronize()  # kernels that filled the buffers must be done before MPI reads them
        super().prepare(nbytes)
