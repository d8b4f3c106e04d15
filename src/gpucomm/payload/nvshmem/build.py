"""Find NVSHMEM and nvcc, build kernels.cu (beside this file) into a shared library, cached per
user, and say in one line why not where that fails.

* NVSHMEM: ``GPUCOMM_NVSHMEM_HOME``, else ``NVSHMEM_HOME`` (a site's install: include/nvshmem.h,
  lib/libnvshmem_host.so*, lib/libnvshmem_device.a), else the ``nvidia-nvshmem-cu13`` /
  ``-cu12`` wheel (``nvidia/nvshmem/`` in site-packages, found with importlib);
* nvcc: ``GPUCOMM_NVCC``, else ``nvcc`` on PATH, else ``$CUDA_HOME/bin/nvcc``,
  /usr/local/cuda/bin/nvcc;
* the library: ``<cache>/libgpucomm_nvshmem-<key>.so``, cache = ``GPUCOMM_CACHE``, else
  ``$XDG_CACHE_HOME/gpucomm``, else ~/.cache/gpucomm; the key hashes the source, nvcc, the
  NVSHMEM install and the GPU architecture, so a change of any of them builds anew.  Ranks that
  find no library build it under a file lock (one build per node, or per shared home), into a
  temporary file renamed into place.  The first run on a node takes the build's time (about
  15 s); ``python -m gpucomm.payload.nvshmem.build [sm_90]`` builds ahead and prints the path.

The library is linked with ``-rdc=true`` against NVSHMEM's device library (libnvshmem_device.a)
and its host library, found at run time through an rpath to the install.
"""

import fcntl
import glob
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys

from ...contract import ERROR_PREFIX
from ...errors import CapabilityError

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
HOST_LIB_GLOB = "libnvshmem_host.so*"
DEVICE_LIB = "libnvshmem_device.a"
HEADER = os.path.join("include", "nvshmem.h")
#: pip's name for the library, for the reasons this module gives
WHEEL = "nvidia-nvshmem-cu13"
BUILD_TIMEOUT_S = 600
#: where CUDA lives when neither PATH nor CUDA_HOME/CUDA_PATH says
DEFAULT_CUDA_HOMES = ("/usr/local/cuda",)


def _wheel_homes():
    """``nvidia/nvshmem`` folders of installed NVSHMEM wheels."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    return [os.path.join(p, "nvshmem") for p in spec.submodule_search_locations]


def host_library(home):
    """The host library file of an install (the wheel ships only the versioned name)."""
    libs = sorted(glob.glob(os.path.join(home, "lib", HOST_LIB_GLOB)), key=len)
    return libs[0] if libs else None


def missing_parts(home):
    """What an NVSHMEM install at ``home`` lacks for the build ([] if nothing)."""
    missing = []
    if not os.path.exists(os.path.join(home, HEADER)):
        missing.append(HEADER)
    if not host_library(home):
        missing.append(os.path.join("lib", HOST_LIB_GLOB))
    if not os.path.exists(os.path.join(home, "lib", DEVICE_LIB)):
        missing.append(os.path.join("lib", DEVICE_LIB))
    return missing


def nvshmem_home(environ=None):
    """The NVSHMEM install to build against, or raise CapabilityError saying what was tried."""
    env = os.environ if environ is None else environ
    for var in ("GPUCOMM_NVSHMEM_HOME", "NVSHMEM_HOME"):
        home = env.get(var, "").strip()
        if home:
            missing = missing_parts(home)
            if missing:
                raise CapabilityError(f"NVSHMEM not usable: {var}={home} lacks {', '.join(missing)}")
            return home
    for home in _wheel_homes():
        if os.path.isdir(home) and not missing_parts(home):
            return home
    raise CapabilityError(f"NVSHMEM library not found: no {WHEEL} (or -cu12) wheel (nvidia/nvshmem) "
                          "in this interpreter and GPUCOMM_NVSHMEM_HOME/NVSHMEM_HOME unset (pip install "
                          f"{WHEEL}, or load the site's nvshmem module)")


def nvcc_path(environ=None):
    """nvcc, or raise CapabilityError."""
    env = os.environ if environ is None else environ
    given = env.get("GPUCOMM_NVCC", "").strip()
    if given:
        if not os.access(given, os.X_OK):
            raise CapabilityError(f"GPUCOMM_NVCC={given} is not an executable")
        return given
    found = shutil.which("nvcc", path=env.get("PATH"))
    if found:
        return found
    for root in (env.get("CUDA_HOME", ""), env.get("CUDA_PATH", "")) + DEFAULT_CUDA_HOMES:
        cand = os.path.join(root, "bin", "nvcc") if root else ""
        if cand and os.access(cand, os.X_OK):
            return cand
    raise CapabilityError("nvcc not found (PATH, CUDA_HOME, /usr/local/cuda; or set GPUCOMM_NVCC): "
                          "the nvshmem method builds its kernels with it (load the site's cuda module)")


def cache_dir(environ=None):
    env = os.environ if environ is None else environ
    if env.get("GPUCOMM_CACHE"):
        return env["GPUCOMM_CACHE"]
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gpucomm")


def build_command(nvcc, home, arch, out):
    """The nvcc command line that builds the library ``out`` for ``arch`` (e.g. sm_90)."""
    host = host_library(home)
    lib = os.path.join(home, "lib")
    return [nvcc, "-rdc=true", "-shared", "-Xcompiler", "-fPIC", "-O2", f"-arch={arch}",
            "-I", os.path.join(home, "include"), SOURCE, "-o", out,
            "-L", lib, "-lnvshmem_device", f"-l:{os.path.basename(host)}", "-Xlinker", f"-rpath={lib}"]


def first_error(output, status):
    """The compiler's first error line (else its first line, else the exit status)."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    for ln in lines:
        if "error" in ln.lower():
            return ln
    return lines[0] if lines else f"exit status {status}"


def cache_key(nvcc, home, arch):
    h = hashlib.sha256()
    with open(SOURCE, "rb") as fp:
        h.update(fp.read())
    for path in (os.path.realpath(nvcc), os.path.realpath(host_library(home)),
                 os.path.realpath(os.path.join(home, "lib", DEVICE_LIB))):
        st = os.stat(path)
        h.update(f"{path}:{st.st_size}:{int(st.st_mtime)}".encode())
    h.update(arch.encode())
    return h.hexdigest()[:16]


def library(arch, environ=None):
    """Path of the built library for ``arch`` (building it if needed), or raise CapabilityError
    with the reason (no NVSHMEM, no nvcc, the compiler's first error line)."""
    home = nvshmem_home(environ)
    nvcc = nvcc_path(environ)
    folder = cache_dir(environ)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise CapabilityError(f"cannot create the build cache {folder} ({exc.strerror}): set GPUCOMM_CACHE") from None
    out = os.path.join(folder, f"libgpucomm_nvshmem-{cache_key(nvcc, home, arch)}.so")
    if os.path.exists(out):
        return out
    with open(out + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another rank of this node may be building it
        if os.path.exists(out):
            return out
        tmp = f"{out}.{os.getpid()}.tmp"
        try:
            done = subprocess.run(build_command(nvcc, home, arch, tmp), capture_output=True, text=True,
                                  timeout=BUILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise CapabilityError(f"building the NVSHMEM kernels took over {BUILD_TIMEOUT_S} s") from None
        except OSError as exc:
            raise CapabilityError(f"cannot run {nvcc}: {exc.strerror}") from None
        if done.returncode != 0 or not os.path.exists(tmp):
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise CapabilityError("building the NVSHMEM kernels failed: "
                                  + first_error(done.stderr + done.stdout, done.returncode))
        os.replace(tmp, out)
    return out


def probe(environ=None):
    """What the site probe reports: {'home', 'nvcc'} or {'error'}; builds nothing."""
    try:
        return {"home": nvshmem_home(environ), "nvcc": nvcc_path(environ)}
    except CapabilityError as exc:
        return {"error": str(exc)}


def main(argv=None):
    from ...constants import EXIT_CAPABILITY
    args = sys.argv[1:] if argv is None else argv
    arch = args[0] if args else "sm_90"
    try:
        print(library(arch))
    except CapabilityError as exc:
        print(f"{ERROR_PREFIX} {exc}", file=sys.stderr)
        return EXIT_CAPABILITY
    return 0


if __name__ == "__main__":
    sys.exit(main())
