"""What this node offers, for the autodetected ReFrame system (config/systems/local.py).

Cheap and safe to call from the ReFrame process: GPU facts come from nvidia-smi/rocm-smi,
the cupy/NCCL check runs in a child interpreter with a time limit.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

_CUPY_CHECK = r"""
import json, cupy
info = {"cupy": cupy.__version__, "devices": cupy.cuda.runtime.getDeviceCount(),
        "hip": bool(getattr(cupy.cuda.runtime, "is_hip", False))}
try:
    from cupy.cuda import nccl
    info["nccl"] = bool(nccl.available and hasattr(nccl, "NcclCommunicator"))
    if info["nccl"]:
        info["nccl_version"] = nccl.get_version()
except Exception:
    info["nccl"] = False
try:  # NVSHMEM and nvcc for the nvshmem method's kernels (found, not built: payload/nvshmem/build.py)
    from gpucomm.payload.nvshmem.build import probe
    info["nvshmem"] = probe()
except Exception as exc:
    info["nvshmem"] = {"error": str(exc)}
print(json.dumps(info))
"""


def _run(cmd: list[str], timeout: float = 30) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout if out.returncode == 0 else ""


def nvidia_gpus() -> list[tuple[int, str, str]]:
    """[(index, name, pci_bus_id)] from nvidia-smi, or []."""
    if not shutil.which("nvidia-smi"):
        return []
    out = _run(["nvidia-smi", "--query-gpu=index,name,pci.bus_id", "--format=csv,noheader"])
    gpus = []
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3 and parts[0].isdigit():
            gpus.append((int(parts[0]), parts[1], parts[2]))
    return gpus


def amd_gpus() -> list[tuple[int, str, str]]:
    """[(index, name, '')] from rocm-smi, or []."""
    if not shutil.which("rocm-smi"):
        return []
    out = _run(["rocm-smi", "--showproductname", "--json"])
    try:
        data = json.loads(out)
    except ValueError:
        return []
    gpus = []
    for key, val in sorted(data.items()):
        m = re.match(r"card(\d+)", key)
        if m:
            gpus.append((int(m.group(1)), val.get("Card Series", val.get("Card series", "AMD GPU")), ""))
    return gpus


def _visible(gpus: list[tuple[int, str, str]], var: str) -> list[tuple[int, str, str]]:
    vis = os.environ.get(var)
    if vis is None:
        return gpus
    keep = [v.strip() for v in vis.split(",") if v.strip()]
    return [g for g in gpus if str(g[0]) in keep]


def slug(name: str) -> str:
    """'NVIDIA H200' -> 'h200', 'NVIDIA A100-SXM4-64GB' -> 'a100', 'AMD Instinct MI250X' -> 'mi250x'."""
    name = re.sub(r"^(nvidia|amd|instinct|tesla|radeon)\s+", "", name.strip(), flags=re.I)
    name = re.sub(r"^(instinct)\s+", "", name, flags=re.I)
    token = re.split(r"[\s\-_/]+", name)[0].lower()
    return re.sub(r"[^a-z0-9]", "", token) or "gpu"


def cupy_info(python: str | None = None, timeout: float = 120) -> dict[str, Any] | None:
    if importlib.util.find_spec("cupy") is None and python is None:
        return None
    out = _run([python or sys.executable, "-c", _CUPY_CHECK], timeout=timeout)
    try:
        return json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def libucx_dir() -> str | None:
    """Folder of the libucx-cu13/-cu12 wheel's libraries, or None."""
    spec = importlib.util.find_spec("libucx")
    if spec is None or not spec.submodule_search_locations:
        return None
    lib = os.path.join(list(spec.submodule_search_locations)[0], "lib")
    return lib if os.path.exists(os.path.join(lib, "libucp.so.0")) else None


def libnccl_dir() -> str | None:
    """Folder of the nvidia-nccl-cu13/-cu12 wheel's libnccl.so.2, or None."""
    try:
        spec = importlib.util.find_spec("nvidia.nccl")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    lib = os.path.join(list(spec.submodule_search_locations)[0], "lib")
    return lib if os.path.exists(os.path.join(lib, "libnccl.so.2")) else None


def mpi_info() -> dict[str, Any]:
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    if mpirun is None:
        cand = os.path.join(os.path.dirname(sys.executable), "mpirun")
        mpirun = cand if os.access(cand, os.X_OK) else None
    version = ""
    if mpirun:
        first = _run([mpirun, "--version"], timeout=20).splitlines()[:1]
        version = first[0] if first else ""
    return {"mpirun": mpirun, "version": version, "openmpi": "Open MPI" in version or "prterun" in version}


def node_info(with_cupy: bool = True) -> dict[str, Any]:
    gpus = _visible(nvidia_gpus(), "CUDA_VISIBLE_DEVICES")
    vendor: str | None = "nvidia"
    if not gpus:
        gpus, vendor = _visible(amd_gpus(), "ROCR_VISIBLE_DEVICES"), "amd"
    if not gpus:
        vendor = None
    info: dict[str, Any] = {
        "gpu_vendor": vendor, "gpu_count": len(gpus), "gpu_model": gpus[0][1] if gpus else None,
        "gpu_slug": slug(gpus[0][1]) if gpus else None, "gpu_bus_ids": [g[2] for g in gpus],
        "python": sys.executable, "mpi": mpi_info(), "libucx": libucx_dir(), "libnccl": libnccl_dir(), "cupy": None}
    if gpus and with_cupy:
        info["cupy"] = cupy_info()
    return info


def main(argv: Sequence[str] | None = None) -> int:
    """``gpucomm probe``: node_info() and, on a GPU node, the GPU-aware MPI level found by
    probing the MPI (siteconf.local_gpu_aware: what config/systems/local.py uses)."""
    import argparse
    parser = argparse.ArgumentParser(prog="gpucomm probe", description="What this node offers, as JSON.")
    parser.parse_args(argv)  # no options: an unknown one is exit 2 with argparse's one-line usage error
    from .siteconf import local_gpu_aware
    info = node_info()
    info["gpu_aware_mpi"] = local_gpu_aware(info)
    print(json.dumps(info, indent=1))
    return 0
