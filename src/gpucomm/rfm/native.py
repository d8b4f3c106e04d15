"""ReFrame bases for the native tools (OSU, nccl-tests/rccl-tests); their leaves, with the
parameters, are checks/native.py, and what the tools take and print is the native/ package.

``NativeCheck`` reuses the payload checks' base (tasks per node, GPU request, skips, site
options, references) and replaces the command, the sanity and the perf variables: the tool's
stdout is parsed into gpucomm records (kept as gpucomm_results.json, like the payload's), sanity
requires the tool's own validation to have passed and every size to be there, and the perf
variables have the payload's names (latency_8B, goodput_*, busbw_*).  ``OsuBase`` and
``NcclTestsBase`` are its two tools: the command line from native.osu.osu_options /
native.nccltests.nccl_tests_options, the sizes each run must report, the parser.
"""

import json
import os

import reframe.utility.sanity as sn
from reframe.core.builtins import variable
from reframe.core.exceptions import ReframeError, SanityError

from ..constants import ALLREDUCE, BW, CCL, COLLECTIVES, FEATURE_AMDGPU, GPU_AWARE_MPI, HOST, PINGPONG
from ..contract import COLLECTIVE_PERF_POINTS, PERF_POINTS, RESULTS_FILE, by_size, record_value
from ..errors import GpucommError
from ..native.nccltests import OPS as NCCL_TESTS_OPS, WHOLE_BUFFER_OPS, nccl_tests_options, parse_nccl_tests
from ..native.osu import is_ccl_benchmark, op_of, osu_options, parse_osu
from ..native.tools import JOB_TOOL_VAR, MISSING_TAG, TOOL_DIRS, find_binary, job_lookup
from ..sizes import parse_sizes, size_label
from .base import GpucommCheck


@sn.deferrable
def native_ok(check):
    missing_tool = check.missing_tool()
    if missing_tool:
        raise SanityError(missing_tool)
    meta, records = check.parsed()
    missing = [s for s in check.expected_sizes() if s not in records]
    if not records:
        raise SanityError(f"{check.benchmark}: no result rows in the output")
    if missing:
        raise SanityError(f"{check.benchmark}: sizes missing: {', '.join(size_label(s) for s in missing)}")
    bad = [s for s, r in records.items() if r.get("validated") is False]
    if bad:
        raise SanityError(f"{check.benchmark}: the tool's validation failed at "
                          f"{', '.join(size_label(s) for s in sorted(bad))}")
    check.tool_sanity(meta, records)
    return True


@sn.deferrable
def native_value(check, size, key):
    return record_value(check.parsed()[1][size], key)


class NativeCheck(GpucommCheck):
    """Base of the OSU and nccl-tests checks; subclasses set ``tool`` and build the command."""

    tool = variable(str)
    #: directory holding the tool's binaries ('' : GPUCOMM_<TOOL>_DIR, extras, then PATH)
    tool_dir = variable(str, value="")
    benchmark = variable(str, value="")
    #: the tools need no Python: no preflight of the payload's interpreter
    preflight = False

    def requirements(self):
        self.identify()
        return self.tool_requirements()

    def description(self):
        return f"{self.tool} {self.benchmark} ({self.method})"

    def more_tags(self):
        return {self.tool, self.op, self.method, "native"}

    def identify(self):
        """Set benchmark, op, method (and sizes) from the check's parameters."""
        raise NotImplementedError

    def tool_requirements(self):
        """(valid_systems, valid_prog_environs) of the tool."""
        raise NotImplementedError

    def check_variables(self):
        super().check_variables()
        if self.tool_dir and not os.path.isdir(self.tool_dir):
            raise ReframeError(f"-S tool_dir={self.tool_dir}: no such directory")

    def tool_dirs(self):
        """Where to look for the tool, in order: -S tool_dir, the variable, the extras (a
        ``{"job": DIR}`` entry: a directory of the job's nodes only, native.tools)."""
        env_var, key = TOOL_DIRS[self.tool]
        return [self.tool_dir, os.environ.get(env_var), self.current_environ.extras.get(key),
                self.current_partition.extras.get(key)]

    def locate(self, name):
        """The tool's binary here, or None."""
        return find_binary(name, [d for d in self.tool_dirs() if isinstance(d, str)])

    def in_job(self):
        """The directories the config names for the job's nodes only (Alps: the uenv's view),
        where the job looks the tool up, unless it is found here."""
        if self.locate(self.benchmark):
            return []
        return [d["job"] for d in self.tool_dirs() if isinstance(d, dict) and d.get("job")]

    def skip_reason(self):
        reason = super().skip_reason()
        if reason is None and self.locate(self.benchmark) is None and not self.in_job():
            env_var, key = TOOL_DIRS[self.tool]
            reason = (f"{self.benchmark} not found: set {env_var}, the environment's "
                      f"extras['{key}'], -S tool_dir=..., or put it on PATH")
        return reason

    def command(self):
        dirs = self.in_job()
        if dirs:  # found by the job itself, before the launch; its absence is the job's reason
            self.prerun_cmds = list(self.prerun_cmds) + job_lookup(self.benchmark, dirs)
            return f'"${JOB_TOOL_VAR}"', self.tool_options()
        return self.locate(self.benchmark), self.tool_options()

    def missing_tool(self):
        """The job's line saying the tool was not where the config said, or ''."""
        try:
            with open(os.path.join(self.stagedir, str(self.stdout))) as fp:
                lines = [ln for ln in fp if ln.startswith(MISSING_TAG + " ")]
        except OSError:
            return ""
        return lines[0][len(MISSING_TAG) + 1:].strip() if lines else ""

    def tool_options(self):
        raise NotImplementedError

    def expected_sizes(self):
        return self.size_list

    def parse(self, text):
        raise NotImplementedError

    def tool_sanity(self, meta, records):
        """Tool-specific checks on top of rows and validation (raise SanityError)."""

    def parsed(self):
        if getattr(self, "_parsed", None) is None:
            path = os.path.join(self.stagedir, str(self.stdout))
            try:
                with open(path) as fp:
                    meta, recs = self.parse(fp.read())
            except (OSError, GpucommError) as exc:
                raise SanityError(f"{self.benchmark}: {exc}") from None
            self._parsed = (meta, by_size(recs))
            # the check's label (osu-host, osu, osu-xccl, nccl-tests, nccl-tests-g), on every
            # record too: gpucomm report pairs tool and payload rows by it (report/tables.py)
            label = self.method_label()
            with open(os.path.join(self.stagedir, RESULTS_FILE), "w") as fp:
                meta = dict(meta, op=self.op, method=label, nranks=self.num_tasks)
                json.dump({"meta": meta, "results": [dict(r, op=self.op, method=label) for r in recs]},
                          fp, indent=1)
        return self._parsed

    def method_label(self):
        return self.tool

    def sanity_ok(self):
        return native_ok(self)

    def perf_functions(self):
        swept = set(self.expected_sizes())
        return {
            name: sn.make_performance_function(native_value(self, size, key), unit)
            for name, (size, key, unit) in self.perf_points.items() if size in swept
        }


class OsuBase(NativeCheck):
    """An OSU benchmark: the leaf gives ``bench`` (its name, a parameter) and ``buffers``
    ('host' or 'device'; the NCCL/RCCL benchmarks, osu_xccl_*, always 'device').  The benchmark
    says the rest: the operation (native.osu.op_of), the method it stands beside and its label
    (host buffers: host, 'osu-host'; device buffers: gpu-aware-mpi, 'osu'; NCCL/RCCL: ccl,
    'osu-xccl'), what the partition and environment must offer, the perf variables."""

    tool = "osu"
    sizes = ""  # '' : by benchmark, see identify()
    #: OSU's own validation (-c, OSU >= 7; the NCCL/RCCL benchmarks have none)
    validation = False
    #: osu_latency's iterations unless -S iters says otherwise: OSU's own default is 1000 for
    #: every size above 8 KiB, each validated on the CPU with -c (minutes at 64 MiB); -i sets
    #: small and large sizes alike
    LATENCY_ITERS = 200

    @property
    def ccl_benchmark(self):
        return is_ccl_benchmark(self.bench)

    def identify(self):
        self.benchmark = self.bench
        self.op = op_of(self.bench)
        if self.ccl_benchmark:
            self.method = CCL
        else:
            self.method = HOST if self.buffers == "host" else GPU_AWARE_MPI
        self.all_gpus = self.op in COLLECTIVES
        if self.all_gpus:
            self.perf_points = COLLECTIVE_PERF_POINTS
        elif self.op in (BW, "bibw"):  # bandwidth tests: no latency of their own
            self.perf_points = {k: v for k, v in PERF_POINTS.items() if not k.startswith("latency")}
        # OSU's -c fills and checks the whole buffer on the CPU in every iteration: validated
        # up to 1 GiB, the native checks did not finish in 160 s on the reference node.  A
        # validated default sweep stops at 4 MiB (latency_8B, goodput_1MiB; -S sizes=1:1G for
        # more; bench/compare times OSU's large sizes without -c); the NCCL benchmarks, which
        # have no validation, go to 1 GiB
        if not self.sizes:
            top = "4M" if self.validation else "1G"
            self.sizes = f"8:{top}" if self.all_gpus else f"1:{top}"

    def tool_requirements(self):
        if self.ccl_benchmark:
            return ["+gpu"], ["+mpi +nccl", "+mpi +rccl"]
        if self.buffers == "host":
            return ["*"], ["+mpi"]
        return ["+gpu"], ["+gpu-aware-mpi"]

    def method_label(self):
        if self.ccl_benchmark:
            return "osu-xccl"
        return "osu-host" if self.buffers == "host" else "osu"

    def accelerator(self):
        """OSU's -d for device buffers of an MPI benchmark ('' for host buffers and for the
        NCCL/RCCL benchmarks, which OSU puts on the accelerator itself)."""
        if self.buffers != "device" or self.ccl_benchmark:
            return ""
        return "rocm" if FEATURE_AMDGPU in self.current_partition.features else "cuda"

    def tool_options(self):
        sizes = self.size_list
        return osu_options(self.bench, min(sizes), max(sizes),
                           iters=self.iters or (self.LATENCY_ITERS if self.op == PINGPONG else 0),
                           warmup=self.warmup, nranks=self.num_tasks, validate=self.validation,
                           device=self.accelerator())

    def expected_sizes(self):
        lo, hi = min(self.size_list), max(self.size_list)
        lo = max(lo, 4) if self.op == ALLREDUCE else lo  # whole floats
        return [s for s in parse_sizes(f"1:{hi}") if s >= lo]

    def parse(self, text):
        return parse_osu(text, self.bench, nranks=self.num_tasks)


class NcclTestsBase(NativeCheck):
    """An nccl-tests (rccl-tests) benchmark on every GPU of the node: the leaf gives ``test``
    (the tool's name: sendrecv, all_reduce, ...) and ``mode``: one rank per GPU (``mpi``, a
    build with MPI=1) or one process driving all GPUs (``single``, -g N)."""

    tool = "nccl-tests"
    method = CCL
    all_gpus = True
    sizes = "8:1G"
    perf_points = COLLECTIVE_PERF_POINTS

    def identify(self):
        self.benchmark = f"{self.test}_perf"
        self.op = NCCL_TESTS_OPS.get(self.test, self.test)

    def tool_requirements(self):
        return ["+gpu"], ["+nccl", "+rccl"]

    def tool_options(self):
        # called from the base's setup hook, after the tasks were set: one rank per GPU, or
        # one process driving every GPU of the node
        self.gpus = self.num_tasks_per_node
        if self.mode == "single":
            self.num_tasks = self.num_tasks_per_node = 1
        sizes = self.size_list
        return nccl_tests_options(self.test, min(sizes), max(sizes), nranks=self.gpus,
                                  gpus=1 if self.mode == "mpi" else self.gpus,
                                  iters=self.iters, warmup=self.warmup)

    def expected_sizes(self):
        lo, hi = min(self.size_list), max(self.size_list)
        if self.op in WHOLE_BUFFER_OPS:
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
