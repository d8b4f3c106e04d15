"""Every GPU's own data paths (checks/datapaths.py, rfm.datapaths): on a CPU partition a SKIP
with its reason; on every site, in health and acceptance, a job script with one rank per GPU,
each bound to its GPU and, by the site's own srun binding, to that GPU's cores (its NUMA node),
and the payload's sweep, NUMA choice and host-link guard.  The site scripts are the session's
shared dry runs of each mode (test_sites.mode_cases): no dry run of their own."""

import ctypes
import re

import pytest

from gpucomm.constants import DATAPATH_LOCAL
from gpucomm.errors import PlausibilityError
from gpucomm.payload.ops.datapaths import DataPaths, hbm_peak_GBps, kernel_source, l2_cache_bytes
from reframe_helpers import DATAPATH_CHECKS, clean_env, job_script, reframe, report_cases
from test_sites import BIND, SITES, VENV_PYTHON, mode_cases

#: the node class's host link per direction (config/references/datapaths.yaml $nominal), the
#: payload's --max-bandwidth; None: unconfirmed, the payload's own detection.  LUMI: "Infinity
#: fabric CPU-GPU 36+36 GB/s" per GCD (lumi-ug's node drawing, lumig-node-overview.svg)
GUARD = {"alps": "450", "leonardo": "31.5", "lumi": "36"}
#: CUDA C++'s device functions that HIP does not provide (the CUDA C++ Programming Guide's load
#: and store functions using cache hints; inline PTX; the sub-warp _sync intrinsics and their
#: 32-bit lane masks, whose HIP forms take 64-bit masks) and the 32-lane warp (HIP's warpSize
#: is 64 on MI250X)
CUDA_ONLY = ("__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv", "__stwb", "__stcg", "__stcs",
             "__stwt", "asm(", "asm volatile", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
             "__shfl_xor_sync", "__ballot_sync", "__all_sync", "__any_sync", "__activemask",
             "__syncwarp", "__match_any_sync", "0xffffffff")
WARP_OF_32 = (r"\b32\b", r"\b31\b", r">>\s*5\b", r"<<\s*5\b", r"&\s*0x1f\b")
SWEEP = {"health": "268435456",
         "acceptance": "4096,16384,65536,262144,1048576,4194304,16777216,67108864,268435456,1073741824"}


def test_cpu_partition_skips_with_the_reason(tmp_path):
    report = tmp_path / "report.json"
    out = reframe("-c", "checks/datapaths.py", "-r", "-S", "sizes=8,4K", "--prefix", tmp_path,
                  "--report-file", report, env=clean_env(OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1))
    assert out.returncode == 0, out.stdout[-3000:]
    (case,) = report_cases(report)
    assert case["result"] == "skip", case
    assert "DataPathsCheck" in out.stdout and "[partition local:cpu lacks +gpu]" in out.stdout, out.stdout[-2000:]


@pytest.mark.parametrize("mode", sorted(SWEEP))
@pytest.mark.parametrize("system", sorted(SITES))
def test_site_script_binds_each_rank_to_its_gpu(tmp_path_factory, system, mode):
    site = SITES[system]
    cases = [c for c in mode_cases(tmp_path_factory, system, mode) if c["name"].split()[0] in DATAPATH_CHECKS]
    (case,) = cases
    assert case["result"] == "pass", case["fail_reason"]
    assert "no reference for DataPathsCheck" in case["descr"] and site.recipe in case["descr"]
    lines = job_script(case).splitlines()
    n = site.gpus
    assert f"#SBATCH --ntasks-per-node={n}" in lines and "#SBATCH --nodes=1" in lines
    assert f"#SBATCH {site.gpu_request.format(n)}" in lines
    assert f"export GPUCOMM_BIND_{site.visible}={','.join(map(str, range(n)))}" in lines
    if site.method_env.get("staging"):
        for var, value in site.method_env["staging"].items():
            assert f"export {var}={value}" in lines, var
    (srun,) = [ln for ln in lines if ln.startswith("srun ")]
    assert srun.startswith(" ".join(["srun", *site.srun, BIND, VENV_PYTHON, "-m gpucomm gpu-datapaths"]))
    assert f" --method staging --sizes {SWEEP[mode]} " in srun and srun.endswith(" --host-numa both")
    guard = GUARD[system]
    assert (f" --max-bandwidth {guard} " in srun) if guard else "--max-bandwidth" not in srun
    assert ("--validate-every 1 --validate-sizes 1048576" in srun) == (mode == "acceptance")


def _code(source):
    """A kernel source without its comments."""
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", source, flags=re.S)


def _hiprtc():
    """HIP's runtime compiler (CuPy's RawModule under ROCm compiles with it), where installed:
    ROCm 5.x has it in libamdhip64, 6.x in libhiprtc."""
    for name in ("libhiprtc.so", "libhiprtc.so.6", "libamdhip64.so.5", "libamdhip64.so"):
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        if hasattr(lib, "hiprtcCompileProgram"):
            return lib
    return None


def _hiprtc_compile(lib, source, arch="gfx90a"):
    """(status, log) of compiling ``source`` for ``arch`` with hiprtc (0: compiled)."""
    prog = ctypes.c_void_p()
    assert lib.hiprtcCreateProgram(ctypes.byref(prog), source.encode(), b"gpucomm.cu", 0, None, None) == 0
    opts = (ctypes.c_char_p * 1)(f"--offload-arch={arch}".encode())
    status = lib.hiprtcCompileProgram(prog, 1, opts)
    size = ctypes.c_size_t()
    lib.hiprtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value + 1)
    lib.hiprtcGetProgramLog(prog, log)
    lib.hiprtcDestroyProgram(ctypes.byref(prog))
    return status, log.value.decode(errors="replace")


def test_lumi_sm_kernels_have_no_cuda_only_intrinsic():
    """Issue 54: LUMI's DataPathsCheck compiled the SM paths' CUDA kernels (__ldcg/__stcg, a
    32-lane warp split) with hiprtc, which has neither: every LUMI health run failed it.  The
    ROCm source names none of CUDA_ONLY nor a 32-lane warp (warpSize instead); the CUDA source
    keeps the cache hints its references were measured with.  Where HIP's runtime compiler is
    installed (Debian's libamdhip64-5, ROCm 5.2.3, here), the ROCm source compiles for the
    MI250X (gfx90a) and the CUDA one does not."""
    hip, cuda = _code(kernel_source(hip=True)), _code(kernel_source(hip=False))
    assert [name for name in CUDA_ONLY if name in hip] == []
    assert [p for p in WARP_OF_32 if re.search(p, hip)] == []
    assert "warpSize" in hip and "__ldcg" in cuda and "__stcg" in cuda
    lib = _hiprtc()
    if lib is not None:
        status, log = _hiprtc_compile(lib, kernel_source(hip=True))
        assert status == 0, log
        status, log = _hiprtc_compile(lib, kernel_source(hip=False))
        assert status != 0 and "__ldcg" in log, log


class _Runtime:
    """cupy's runtime as it names the two attributes, each platform with its own numbers."""

    def __init__(self, clock, width, values):
        self.cudaDevAttrMemoryClockRate, self.cudaDevAttrGlobalMemoryBusWidth = clock, width
        self.values = values

    def deviceGetAttribute(self, attr, device):
        return self.values[attr]


def test_hbm_peak_reads_the_named_attributes():
    """Issue 54: the raw cudaDeviceAttr numbers 36/37 are other attributes under HIP (36 is
    cudaDevAttrMaxPitch in cupy's HIP enum): the names read the memory clock and bus width on
    both.  MI250X GCD: 1600 MHz x 4096 bits x 2 = 1638.4 GB/s; H100 SXM: 2619 MHz x 5120 bits."""
    hip = _Runtime(12, 13, {12: 1_600_000, 13: 4096, 36: 2_147_483_647, 37: 0})
    assert hbm_peak_GBps(hip, 0) == pytest.approx(1638.4)
    cuda = _Runtime(36, 37, {36: 2_619_000, 37: 5120})
    assert hbm_peak_GBps(cuda, 0) == pytest.approx(2 * 2.619e9 * 5120 / 8 / 1e9)
    assert hbm_peak_GBps(object(), 0) is None  # a runtime without the names: no peak, no guess


def _datapaths(peak, l2):
    op = object.__new__(DataPaths)
    op.hbm_limits, op.l2_sizes, op.rank_directions = [peak], [l2], None
    return op


def _local_copy_guard(peak, l2):
    return _datapaths(peak, l2)._hold_to_memory_peak


def test_a_local_copy_that_fits_the_l2_cache_may_run_above_the_memory_peak():
    """On an H100 (50 MiB L2, 3352 GB/s memory peak) a 16 MiB local copy ran at 3387 GB/s read
    + write (bench/results/2026-12-06-nvidia-h100-x1/52-acceptance): the cache, not a bug.  A
    copy larger than the cache above the peak is one; without the L2's size, 256 MiB stands."""
    hold = _local_copy_guard(3352.3, 50 << 20)
    hold(DATAPATH_LOCAL, 16 << 20, 3386.9)
    op = _datapaths(3352.3, 50 << 20)
    for path in ("h2d-ce", DATAPATH_LOCAL):  # a path across the host link has no hbm_GBps
        op.case = {"path": path, "scope": "single", "gpu": 0}
        assert op.metrics(64 << 20, 1e-3)["goodput_GBps"] > 0
    with pytest.raises(PlausibilityError, match="larger than the L2 cache"):
        hold(DATAPATH_LOCAL, 64 << 20, 3386.9)
    hold(DATAPATH_LOCAL, 64 << 20, 3000.0)
    unknown = _local_copy_guard(3352.3, None)
    unknown(DATAPATH_LOCAL, 64 << 20, 3386.9)
    with pytest.raises(PlausibilityError):
        unknown(DATAPATH_LOCAL, 512 << 20, 3386.9)


def test_l2_cache_reads_the_named_attribute():
    class Runtime:
        cudaDevAttrL2CacheSize = 38

        def deviceGetAttribute(self, attr, device):
            return {38: 50 << 20}[attr]

    assert l2_cache_bytes(Runtime(), 0) == 50 << 20
    assert l2_cache_bytes(object(), 0) is None
