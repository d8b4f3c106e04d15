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
import sys
from collections.abc import Mapping, Sequence
from typing import Any, cast

from ..constants import CCL, EXIT_CAPABILITY, EXIT_OK, HOST, METHODS
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
              maps_path: str = "/proc/self/maps", net_plugin: str = "") -> tuple[dict[str, Any], str | None]:
    """({what was found}, None) or ({...}, reason): the checks above, in order."""
    info: dict[str, Any] = {"python": sys.executable, "methods": list(methods)}
    try:
        check_gpucomm(info)
        check_mpi(info, environ, maps_path)
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
    args = parser.parse_args(argv)
    methods = [m for m in args.method.split(",") if m]
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        parser.error(f"unknown method {', '.join(unknown)}; choose from {', '.join(METHODS)}")
    info, reason = preflight(methods, args.plugin, net_plugin=args.net_plugin)
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
