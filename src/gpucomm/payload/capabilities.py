"""Capability probes: answer "can this method run here?" before anything can crash."""

import ctypes
import os

from ..constants import GPU_AWARE_LEVELS


def _truthy(value):
    return str(value).strip().lower() in ("1", "yes", "true", "on", "enabled")


def _mapped_libraries():
    try:
        with open("/proc/self/maps") as fp:
            return {line.split()[-1] for line in fp if "/" in line}
    except OSError:
        return set()


def _mpix_query(name):
    """MPIX_Query_cuda_support() / MPIX_Query_rocm_support() of the loaded MPI, or None."""
    try:
        fn = getattr(ctypes.CDLL(None), name)
    except (AttributeError, OSError):
        return None
    fn.restype = ctypes.c_int
    try:
        return int(fn())
    except Exception:
        return None


LEVELS = GPU_AWARE_LEVELS


#: GPUCOMM_GPU_AWARE_MPI's documented values, exactly: a level's name or its short form
LEVEL_VALUES = {"none": "none", "0": "none", "p2p": "p2p", "full": "full", "1": "full"}


def _level(value):
    v = str(value).strip().lower()
    if v not in LEVEL_VALUES:
        from ..errors import GpucommError
        raise GpucommError(f"bad GPUCOMM_GPU_AWARE_MPI={value!r}: expected one of "
                           f"{', '.join(LEVEL_VALUES)} (none/0, p2p, full/1)")
    return LEVEL_VALUES[v]


def check_environment():
    """The methods' environment variables, checked whatever the method (a bad value is bad
    input even where the host method would not read it: GPUCOMM_GPU_AWARE_MPI=bogus with
    --method host passed, saying nothing): GpucommError naming the bad one."""
    if os.environ.get("GPUCOMM_GPU_AWARE_MPI") is not None:
        _level(os.environ["GPUCOMM_GPU_AWARE_MPI"])
    from .methods.ipc_copy import sync_request
    sync_request()


def gpu_aware_mpi(library_version=""):
    """How far the MPI in this process accepts device pointers, and why we think so.

    Returns (level, reason), level one of:
      * "full": point-to-point and collectives, reductions included (Cray MPICH with
        MPICH_GPU_SUPPORT_ENABLED=1, an MPI built with CUDA/ROCm support);
      * "p2p": point-to-point only (Open MPI built without CUDA whose pml ucx moves device
        memory: its collectives copy and reduce on the CPU and would crash);
      * "none".
    Must be called after MPI_Init.  Order: GPUCOMM_GPU_AWARE_MPI (none/0, p2p, full/1; the system config
    sets it where it knows), MPICH_GPU_SUPPORT_ENABLED, MV2_USE_CUDA,
    MPIX_Query_{cuda,rocm}_support, then Open MPI with UCX's CUDA/ROCm transports loaded.
    The default is "none": handing device memory to an MPI that cannot take it segfaults.
    """
    explicit = os.environ.get("GPUCOMM_GPU_AWARE_MPI")
    if explicit is not None and explicit.strip() != "":
        return _level(explicit), f"GPUCOMM_GPU_AWARE_MPI={explicit}"
    if _truthy(os.environ.get("MPICH_GPU_SUPPORT_ENABLED", "0")):
        return "full", "MPICH_GPU_SUPPORT_ENABLED=1"
    if _truthy(os.environ.get("MV2_USE_CUDA", "0")):
        return "full", "MV2_USE_CUDA=1"
    for query in ("MPIX_Query_cuda_support", "MPIX_Query_rocm_support"):
        if _mpix_query(query) == 1:
            return "full", f"{query}() = 1"
    if "Open MPI" in library_version:
        libs = _mapped_libraries()
        has_ucp = any("libucp.so" in lib for lib in libs)
        has_gpu_tl = any("libuct_cuda" in lib or "libuct_rocm" in lib for lib in libs)
        pml = os.environ.get("OMPI_MCA_pml", "")
        if has_ucp and has_gpu_tl and pml == "ucx":
            return "p2p", "Open MPI without CUDA support, pml ucx with UCX GPU transports loaded"
    return "none", ("no sign that this MPI is GPU-aware (set GPUCOMM_GPU_AWARE_MPI=1 if it is, "
                    "p2p if only point-to-point is; Cray MPICH needs MPICH_GPU_SUPPORT_ENABLED=1, "
                    "Open MPI needs pml ucx with a CUDA/ROCm-enabled UCX)")


def nccl_module():
    """cupy's NCCL/RCCL binding, or raise CapabilityError with the reason."""
    from ..errors import CapabilityError
    try:
        from cupy.cuda import nccl
    except Exception as exc:
        raise CapabilityError(f"NCCL/RCCL binding not importable: {exc}") from None
    if not getattr(nccl, "available", False) or not hasattr(nccl, "NcclCommunicator"):
        raise CapabilityError("NCCL/RCCL library not found by cupy (install nvidia-nccl-cu13 / "
                              "nvidia-nccl-cu12, or load the site's nccl/rccl module)")
    return nccl
