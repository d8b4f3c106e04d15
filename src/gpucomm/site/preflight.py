"""``gpucomm preflight``: before a job's launch, can the configured interpreter run the payload?

The checks put it in the job script (rfm.GpucommCheck.preflight_cmds) as a plain command of the
batch script, before the launcher:

    /path/venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/lumi.md || exit $?

It runs once, on the job's first node (a compute node), in the job's environment (modules,
uenv, the method's variables), without the launcher and **without initialising MPI**: mpi4py
is imported with ``mpi4py.rc.initialize = False``, so its MPI library is loaded (and with it
the GTL, where it is linked) but MPI_Init never runs.  That is what works everywhere: Cray
MPICH's MPI_Init outside srun (a singleton) may or may not find PMI, and with
MPICH_GPU_SUPPORT_ENABLED=1 and no GTL it aborts in MPI_Init with a message that names
nothing of ours; ``srun -n 1`` would cost a job step and start the same abort.
MPI_Get_library_version may be called before MPI_Init (MPI 3.0, 8.1.1).

It checks, in order, and stops at the first thing missing:

* gpucomm imports (the venv is the one the recipe builds);
* mpi4py imports and names its MPI library; on Cray MPICH with MPICH_GPU_SUPPORT_ENABLED=1 a
  libmpi_gtl_* must be in /proc/self/maps (linked into mpi4py, or LD_PRELOADed), else the
  first GPU-aware call aborts with "GTL library is not linked";
* for gpu-aware-mpi on Open MPI, where the environment asks (``--mpi-cuda``: Leonardo, whose
  Open MPI moves device buffers itself; not a local Open MPI made GPU-aware by a UCX wheel,
  which the probe of site/gpuaware.py judges): the MPI was built with CUDA support, as its ``ompi_info``
  says (``mpi_built_with_cuda_support``, ``opal_built_with_cuda_support`` in Open MPI 5: Open
  MPI's documentation, "How can I tell if Open MPI was built with CUDA support?"), the
  ``ompi_info`` beside the libmpi that mpi4py loaded, else the one on PATH;
  ``MPIX_Query_cuda_support()`` "must be called after MPI is initialized" (its man page), which
  the preflight never does.  Where ``ompi_info`` says nothing, ``mpi_cuda`` is null and the
  launch goes ahead;
* for a GPU method: cupy imports and sees a device;
* for ccl: cupy's NCCL/RCCL binding finds the library (with the plugin module named, when the
  environment configures one);
* for ccl where the environment names NCCL/RCCL's network plugin library (``--net-plugin``, e.g.
  libnccl-net.so): it loads, by name, as NCCL/RCCL open it (dlopen through the job's library
  path).  Otherwise NCCL falls back to its socket transport, or, with NCCL_NET naming the
  plugin, fails at init ("Failed to initialize any NET plugin"), both well after the launch.

Output: one ``GPUCOMM-PREFLIGHT {json}`` line on stdout (what was found, ``ok``), and on failure
one ``gpucomm: error: preflight: ...`` line on stderr that names the recipe; exit code 3
(EXIT_CAPABILITY).  The check's sanity reads both (rfm.sanity.preflight_ok).
"""

from __future__ import annotations

import argparse
import ctypes
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any, cast

from ..constants import CCL, EXIT_CAPABILITY, EXIT_OK, GPU_AWARE_MPI, HOST, METHODS
from ..contract import ERROR_PREFIX

#: the stdout tag of the preflight's one summary line
PREFLIGHT_TAG = "GPUCOMM-PREFLIGHT"
#: the stderr prefix of its one error line (the payload's ERROR_PREFIX + ' preflight: ')
ERROR_LINE = f"{ERROR_PREFIX} preflight: "


class Missing(Exception):
    """Something the payload needs is not there (the message says what)."""


def mapped(part: str, maps_path: str = "/proc/self/maps") -> list[str]:
    """Paths of the libraries mapped into this process whose name contains ``part``."""
    try:
        with open(maps_path) as fp:
            return sorted({line.split()[-1] for line in fp if part in line.split()[-1]})
    except OSError:
        return []


def gtl_loaded(maps_path: str = "/proc/self/maps") -> list[str]:
    """Names of the libmpi_gtl_* libraries mapped into this process ([] if none)."""
    return sorted({os.path.basename(p) for p in mapped("libmpi_gtl_", maps_path)})


def check_gpucomm(info: dict[str, Any]) -> None:
    gpucomm = importlib.import_module("gpucomm")
    info["gpucomm"] = os.path.dirname(cast(str, gpucomm.__file__))


def check_mpi(info: dict[str, Any], environ: Mapping[str, str] = os.environ,
              maps_path: str = "/proc/self/maps") -> None:
    try:
        mpi4py = importlib.import_module("mpi4py")
        mpi4py.rc.initialize = False   # load the library, never MPI_Init
        mpi4py.rc.finalize = False
        mpi = importlib.import_module("mpi4py.MPI")
    except Exception as exc:
        raise Missing(f"mpi4py does not import ({exc}): build it against the site MPI") from None
    library = mpi.Get_library_version().strip().splitlines()
    info["mpi"] = library[0].strip(" \x00") if library else "unknown"
    cray = "CRAY MPICH" in info["mpi"].upper()
    info["gtl"] = gtl_loaded(maps_path) if cray else None
    if cray and environ.get("MPICH_GPU_SUPPORT_ENABLED") == "1" and not info["gtl"]:
        raise Missing("MPICH_GPU_SUPPORT_ENABLED=1 but no libmpi_gtl_* is loaded with mpi4py "
                      f"({info['mpi']}): link the GTL into mpi4py or LD_PRELOAD it")


#: ompi_info --parsable --all's line of Open MPI's CUDA support (4.x: mpi_built_with_cuda_support;
#: 5.x prints it as opal_built_with_cuda_support, whose synonym that is)
OMPI_CUDA_LINE = re.compile(r"^mca:(?:mpi|opal):base:param:(?:mpi|opal)_built_with_cuda_support:value:(\w+)",
                            re.MULTILINE)


def ompi_info_path(maps_path: str = "/proc/self/maps") -> str | None:
    """The ompi_info of the Open MPI whose libmpi is loaded (its prefix's bin/), else PATH's."""
    for lib in mapped("libmpi.so", maps_path):
        tool = os.path.join(os.path.dirname(os.path.dirname(lib)), "bin", "ompi_info")
        if os.access(tool, os.X_OK):
            return tool
    return shutil.which("ompi_info")


def ompi_cuda_support(tool: str) -> bool | None:
    """Whether ``tool`` (ompi_info) says its Open MPI was built with CUDA support; None where it
    does not run or does not say."""
    try:
        out = subprocess.run([tool, "--parsable", "--all"], capture_output=True, text=True,
                             timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = OMPI_CUDA_LINE.search(out)
    return None if found is None else found.group(1) == "true"


def check_openmpi_cuda(info: dict[str, Any], methods: Sequence[str], maps_path: str = "/proc/self/maps",
                       tool: str | None = None) -> None:
    """gpu-aware-mpi on Open MPI: Missing where its ompi_info says it has no CUDA support
    (``tool``: that ompi_info, else ompi_info_path's)."""
    if GPU_AWARE_MPI not in methods or "OPEN MPI" not in str(info.get("mpi", "")).upper():
        return
    tool = tool or ompi_info_path(maps_path)
    info["mpi_cuda"] = ompi_cuda_support(tool) if tool else None
    if info["mpi_cuda"] is False:
        raise Missing(f"{info['mpi']} was built without CUDA support ({tool} --parsable --all: "
                      "mpi_built_with_cuda_support false), and gpu-aware-mpi hands it device "
                      "buffers: load the CUDA-aware Open MPI module")


def check_gpu(info: dict[str, Any]) -> None:
    try:
        cupy = importlib.import_module("cupy")
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        raise Missing(f"cupy does not import or sees no GPU ({exc})") from None
    info["cupy"] = getattr(cupy, "__version__", "?")
    info["gpus"] = count
    if count < 1:
        raise Missing("cupy sees no GPU on this node")


def check_ccl(info: dict[str, Any], plugin: str = "") -> None:
    try:
        nccl = importlib.import_module("cupy.cuda.nccl")
        ok = bool(getattr(nccl, "available", False) and hasattr(nccl, "NcclCommunicator"))
        info["ccl"] = nccl.get_version() if ok else None
    except Exception as exc:
        raise Missing(f"cupy's NCCL/RCCL binding does not import ({exc})") from None
    if not ok:
        raise Missing("cupy finds no NCCL/RCCL library" + (f" (load {plugin} and the site's "
                                                             "NCCL/RCCL)" if plugin else ""))
    info["ccl_plugin_module"] = plugin or None


def check_net_plugin(info: dict[str, Any], library: str, plugin: str = "",
                     maps_path: str = "/proc/self/maps") -> None:
    """NCCL/RCCL's network plugin ``library`` loads here, by name as NCCL/RCCL dlopen it (NCCL
    and RCCL src/plugin/plugin_open.cc): else Missing with the loader's reason and the module
    that provides it."""
    try:
        ctypes.CDLL(library, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    except OSError as exc:
        load = f": load the plugin module {plugin}" if plugin else ""
        raise Missing(f"the NCCL/RCCL network plugin {library} does not load ({exc}){load}") from None
    info["net_plugin"] = mapped(os.path.splitext(library)[0], maps_path) or [library]


def preflight(methods: Sequence[str], plugin: str = "", environ: Mapping[str, str] = os.environ,
              maps_path: str = "/proc/self/maps", net_plugin: str = "",
              mpi_cuda: bool = False) -> tuple[dict[str, Any], str | None]:
    """({what was found}, None) or ({...}, reason): the checks above, in order (``mpi_cuda``:
    Open MPI's CUDA support)."""
    info: dict[str, Any] = {"python": sys.executable, "methods": list(methods)}
    try:
        check_gpucomm(info)
        check_mpi(info, environ, maps_path)
        if mpi_cuda:
            check_openmpi_cuda(info, methods, maps_path)
        if any(m != HOST for m in methods):
            check_gpu(info)
        if CCL in methods:
            check_ccl(info, plugin)
            if net_plugin:
                check_net_plugin(info, net_plugin, plugin, maps_path)
    except Missing as exc:
        return info, str(exc)
    except ImportError as exc:  # gpucomm itself
        return info, f"gpucomm does not import in {sys.executable} ({exc})"
    return info, None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpucomm preflight", description=__doc__.split("\n")[0])
    parser.add_argument("--method", default=HOST,
                        help="method(s) the job runs, comma-separated (default host)")
    parser.add_argument("--recipe", default="",
                        help="the site's recipe (docs/sites/<site>.md), named when something is missing")
    parser.add_argument("--plugin", default="", help="NCCL/RCCL network plugin module, for the message")
    parser.add_argument("--net-plugin", default="", metavar="LIBRARY",
                        help="NCCL/RCCL network plugin library that must load for ccl (e.g. libnccl-net.so)")
    parser.add_argument("--mpi-cuda", action="store_true",
                        help="for gpu-aware-mpi on Open MPI: require CUDA support (ompi_info)")
    args = parser.parse_args(argv)
    methods = [m for m in args.method.split(",") if m]
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        parser.error(f"unknown method {', '.join(unknown)}; choose from {', '.join(METHODS)}")
    info, reason = preflight(methods, args.plugin, net_plugin=args.net_plugin, mpi_cuda=args.mpi_cuda)
    info["ok"] = reason is None
    if reason:
        info["error"] = reason
    print(f"{PREFLIGHT_TAG} {json.dumps(info, sort_keys=True)}", flush=True)
    if reason is None:
        return EXIT_OK
    where = f"; build the payload's venv per {args.recipe}" if args.recipe else ""
    print(f"{ERROR_LINE}{reason} [{sys.executable}]{where}", file=sys.stderr, flush=True)
    return EXIT_CAPABILITY


if __name__ == "__main__":
    sys.exit(main())
