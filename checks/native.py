"""The tools sites already trust, beside our payloads: OSU micro-benchmarks and nccl-tests /
rccl-tests, with the payload's perf variable names so reports line them up.

Binaries come from the site: GPUCOMM_OSU_DIR / GPUCOMM_NCCL_TESTS_DIR, the environment's
extras ('osu_dir', 'nccl_tests_dir'), -S tool_dir=..., or PATH; a check whose binary is absent
skips and says where it looked.
"""

import reframe as rfm
from reframe.core.builtins import parameter
from reframe.core.exceptions import SanityError

from gpucomm.native.nccltests import parse_nccl_tests
from gpucomm.native.osu import op_of, parse_osu
from gpucomm.rfm import NativeCheck
from gpucomm.contract import COLLECTIVE_PERF_POINTS, PERF_POINTS
from gpucomm.sizes import parse_sizes


class OsuBase(NativeCheck):
    """What the OSU checks share: options, sizes, parsing."""

    tool = "osu"
    sizes = ""  # '' : by benchmark, see identify()
    #: OSU's default cap on a collective's buffer (-M raises it)
    OSU_MEM_LIMIT = 512 << 20
    #: osu_latency's iterations unless -S iters says otherwise: OSU's own default is 1000 for
    #: every size above 8 KiB, each validated on the CPU with -c (minutes at 64 MiB); -i sets
    #: small and large sizes alike
    LATENCY_ITERS = 200

    def identify(self):
        self.benchmark = self.bench
        self.op = op_of(self.bench)
        self.all_gpus = self.op in ("allreduce", "alltoall")
        if self.all_gpus:
            self.perf_points = COLLECTIVE_PERF_POINTS
        elif self.op in ("bw", "bibw"):  # bandwidth tests: no latency of their own
            self.perf_points = {k: v for k, v in PERF_POINTS.items() if not k.startswith("latency")}
        # OSU's -c fills and checks the whole buffer on the CPU in every
        # iteration: the 23 native checks up to 1 GiB did not finish in 160 s on the reference
        # node (bench/results/2026-11-30-nvidia-h200-x2/09-tools).
        # A validated default sweep stops at 4 MiB (latency_8B, goodput_1MiB; -S sizes=1:1G for
        # more; bench/compare times OSU's large sizes without -c); the NCCL benchmarks, which
        # have no validation, go to 1 GiB
        if not self.sizes:
            top = "4M" if getattr(self, "validation", False) else "1G"
            self.sizes = f"8:{top}" if self.all_gpus else f"1:{top}"

    def tool_options(self):
        sizes = self.size_list
        opts = ["-m", f"{min(sizes)}:{max(sizes)}"]
        iters = self.iters or (self.LATENCY_ITERS if self.op == "pingpong" else 0)
        if iters > 0:
            opts += ["-i", str(iters)]
        if self.warmup >= 0:
            opts += ["-x", str(self.warmup)]
        if self.all_gpus:
            opts += ["-f"]
            # all-to-all buffers hold a block per rank; OSU silently drops sizes above its cap
            need = max(sizes) * (self.num_tasks if self.op == "alltoall" else 1)
            if need > self.OSU_MEM_LIMIT:
                opts += ["-M", str(need)]
        return opts + self.buffer_options()

    def buffer_options(self):
        raise NotImplementedError

    def expected_sizes(self):
        lo, hi = min(self.size_list), max(self.size_list)
        lo = max(lo, 4) if self.op == "allreduce" else lo  # whole floats
        return [s for s in parse_sizes(f"1:{hi}") if s >= lo]

    def parse(self, text):
        return parse_osu(text, self.bench, nranks=self.num_tasks)


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

    def identify(self):
        super().identify()
        self.method = "host" if self.buffers == "host" else "gpu-aware-mpi"

    def tool_requirements(self):
        if self.buffers == "host":
            return ["*"], ["+mpi"]
        return ["+gpu"], ["+gpu-aware-mpi"]

    def method_label(self):
        return "osu-host" if self.buffers == "host" else "osu"

    def buffer_options(self):
        opts = ["-c"] if self.validation else []
        if self.op == "allreduce":
            opts += ["-T", "mpi_float"]  # a float sum, like the payload's (MPI_CHAR sums overflow)
        if self.buffers == "device":
            accel = "rocm" if "amdgpu" in self.current_partition.features else "cuda"
            opts += ["-d", accel] + ([] if self.all_gpus else ["D", "D"])
        return opts


@rfm.simple_test
class OsuXcclCheck(OsuBase):
    """OSU's NCCL/RCCL benchmarks (osu_xccl_*, an OSU build with --enable-ncclomb or
    --enable-rcclomb), beside our ccl method ('osu-xccl').  They always use device buffers
    (OSU forces the accelerator) and have no validation of their own (no -c, no -T: the
    all-reduce sums floats)."""

    bench = parameter(["osu_xccl_latency", "osu_xccl_bw", "osu_xccl_bibw", "osu_xccl_allreduce",
                       "osu_xccl_alltoall"])
    buffers = "device"
    method = "ccl"

    def tool_requirements(self):
        return ["+gpu"], ["+mpi +nccl", "+mpi +rccl"]

    def method_label(self):
        return "osu-xccl"

    def buffer_options(self):
        return []


@rfm.simple_test
class NcclTestsCheck(NativeCheck):
    """nccl-tests (rccl-tests) on every GPU of the node: one rank per GPU (``mpi``, needs a
    build with MPI=1) or one process driving all GPUs (``single``, -g N)."""

    test = parameter(["sendrecv", "all_reduce", "alltoall", "all_gather"])
    mode = parameter(["mpi", "single"])
    tool = "nccl-tests"
    method = "ccl"
    all_gpus = True
    sizes = "8:1G"
    perf_points = COLLECTIVE_PERF_POINTS

    def identify(self):
        self.benchmark = f"{self.test}_perf"
        self.op = {"all_reduce": "allreduce", "all_gather": "allgather"}.get(self.test, self.test)

    def tool_requirements(self):
        return ["+gpu"], ["+nccl", "+rccl"]

    def tool_options(self):
        # called from the base's setup hook, after the tasks were set: one rank per GPU, or
        # one process driving every GPU of the node
        self.gpus = self.num_tasks_per_node
        if self.mode == "single":
            self.num_tasks = self.num_tasks_per_node = 1
        sizes = self.size_list
        scale = self.num_tasks_per_node if self.mode == "mpi" else self.gpus
        scale = scale if self.op in ("alltoall", "allgather") else 1  # the tool's size is the whole buffer
        opts = ["-b", str(min(sizes) * scale), "-e", str(max(sizes) * scale), "-f", "2",
                "-g", "1" if self.mode == "mpi" else str(self.gpus), "-c", "1"]
        if self.iters > 0:
            opts += ["-n", str(self.iters)]
        if self.warmup >= 0:
            opts += ["-w", str(self.warmup)]
        return opts

    def expected_sizes(self):
        lo, hi = min(self.size_list), max(self.size_list)
        if self.op in ("alltoall", "allgather"):
            # the tool rounds its buffer down to whole float blocks per rank pair: tiny blocks
            # come out as 0 B rows; require blocks of at least 4 * ranks * ranks bytes
            lo = max(lo, 4 * self.gpus * self.gpus)
        return [s for s in parse_sizes(f"1:{hi}") if s >= lo]

    def method_label(self):
        return "nccl-tests" if self.mode == "mpi" else "nccl-tests-g"

    def parse(self, text):
        return parse_nccl_tests(text, nranks=self.gpus)

    def tool_sanity(self, meta, records):
        if meta["out_of_bounds_ok"] is False:
            raise SanityError(f"{self.benchmark}: {meta['out_of_bounds']} values out of bounds")
        if meta["nranks"] != self.gpus:
            raise SanityError(f"{self.benchmark}: {meta['nranks']} GPUs in the output, expected "
                              f"{self.gpus} (an nccl-tests build without MPI=1 runs one copy per rank)")
