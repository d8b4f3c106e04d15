"""The tools sites already trust, beside our payloads: OSU micro-benchmarks and nccl-tests /
rccl-tests, with the payload's perf variable names so reports line them up.

Binaries come from the site: GPUCOMM_OSU_DIR / GPUCOMM_NCCL_TESTS_DIR, the environment's
extras ('osu_dir', 'nccl_tests_dir'), -S tool_dir=..., or PATH; a check whose binary is absent
skips and says where it looked.  The leaves here give the parameters; gpucomm.rfm.native has the
bases (command line, sizes, sanity), gpucomm.native the tools' options and parsers.
"""

import reframe as rfm
from reframe.core.builtins import parameter

from gpucomm.rfm import NcclTestsBase, OsuBase


@rfm.simple_test
class OsuCheck(OsuBase):
    """osu_latency/osu_bw/osu_bibw on 2 ranks, osu_allreduce/osu_alltoall on every GPU, with
    host buffers ('osu-host', beside our host method) or device buffers (-d cuda|rocm, beside
    gpu-aware-mpi); '-c' asks OSU to validate the data where the build supports it.  Device
    collectives skip where the environment's MPI is GPU-aware for point-to-point only
    (extras['gpu_aware_mpi_level'], as the payload checks)."""

    bench = parameter(["osu_latency", "osu_bw", "osu_bibw", "osu_allreduce", "osu_alltoall"])
    buffers = parameter(["host", "device"])
    #: OSU's own validation (-c, OSU >= 7); off for builds without it
    validation = True


@rfm.simple_test
class OsuXcclCheck(OsuBase):
    """OSU's NCCL/RCCL benchmarks (osu_xccl_*, an OSU build with --enable-ncclomb or
    --enable-rcclomb), beside our ccl method ('osu-xccl').  They always use device buffers
    (OSU forces the accelerator) and have no validation of their own (no -c, no -T: the
    all-reduce sums floats)."""

    bench = parameter(["osu_xccl_latency", "osu_xccl_bw", "osu_xccl_bibw", "osu_xccl_allreduce",
                       "osu_xccl_alltoall"])
    buffers = "device"


@rfm.simple_test
class NcclTestsCheck(NcclTestsBase):
    """nccl-tests (rccl-tests) on every GPU of the node: one rank per GPU (``mpi``, needs a
    build with MPI=1) or one process driving all GPUs (``single``, -g N)."""

    test = parameter(["sendrecv", "all_reduce", "alltoall", "all_gather"])
    mode = parameter(["mpi", "single"])
