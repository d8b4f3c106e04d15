"""Shared ReFrame bases for the gpucomm checks (checks/*.py import them from here).

A check picks an operation and parameterises the method; this base turns that into the
payload command line, the systems/environments it needs (by feature), a sanity function that
requires every size to be validated, and perf variables read from the payload's JSON records.
"""

import json
import os
import sys

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, sanity_function, variable
from reframe.core.exceptions import SanityError

from .engine import DONE_TAG, RESULT_TAG
from .sizes import parse_sizes, size_label

#: method -> (valid_systems, valid_prog_environs): what a partition and an environment must offer
METHOD_REQUIREMENTS = {
    "host": (["*"], ["+mpi"]),
    "staging": (["+gpu"], ["+mpi +cupy"]),
    "gpu-aware-mpi": (["+gpu"], ["+gpu-aware-mpi +cupy"]),
    "ipc-copy": (["+gpu"], ["+mpi +cupy"]),
    "ccl": (["+gpu"], ["+mpi +cupy +nccl", "+mpi +cupy +rccl"]),
}

RESULTS_FILE = "gpucomm_results.json"

#: perf variable -> (size in bytes, record field or 'latency', unit)
PERF_POINTS = {
    "latency_8B": (8, "latency", "us"),
    "goodput_1MiB": (1 << 20, "goodput_GBps", "GB/s"),
    "goodput_64MiB": (64 << 20, "goodput_GBps", "GB/s"),
    "goodput_256MiB": (256 << 20, "goodput_GBps", "GB/s"),
    "goodput_1GiB": (1 << 30, "goodput_GBps", "GB/s"),
}
COLLECTIVE_PERF_POINTS = dict(PERF_POINTS, busbw_1GiB=(1 << 30, "busbw_GBps", "GB/s"))


def read_records(text):
    """The payload's per-size records (``GPUCOMM-RESULT {...}`` lines) by size, and its summary."""
    records, summary = {}, None
    for line in text.splitlines():
        if line.startswith(RESULT_TAG + " "):
            rec = json.loads(line[len(RESULT_TAG) + 1:])
            records[rec["size"]] = rec
        elif line.startswith(DONE_TAG + " "):
            summary = json.loads(line[len(DONE_TAG) + 1:])
    return records, summary


def _payload_error(stderr_path):
    try:
        with open(stderr_path) as fp:
            lines = [ln.strip() for ln in fp if "gpucomm: error:" in ln]
    except OSError:
        return ""
    return lines[0].split("gpucomm: error:", 1)[1].strip() if lines else ""


@sn.deferrable
def payload_ok(stdout, stderr, sizes):
    """True if the payload finished and validated every size; else a SanityError with its reason."""
    try:
        with open(stdout) as fp:
            records, summary = read_records(fp.read())
    except OSError as exc:
        raise SanityError(f"no payload output: {exc}")
    if summary is None:
        reason = _payload_error(stderr) or "no GPUCOMM-DONE line (the payload crashed or was killed)"
        raise SanityError(f"payload did not finish: {reason}")
    if not summary.get("ok"):
        raise SanityError(f"payload failed: {summary.get('error') or _payload_error(stderr)}")
    missing = [s for s in sizes if s not in records or not records[s].get("validated")]
    if missing:
        raise SanityError(f"sizes not validated: {', '.join(size_label(s) for s in missing)}")
    return True


@sn.deferrable
def record_value(stdout, size, key):
    """One number of the record for ``size``: 'latency' (median time, us) or a record field."""
    with open(stdout) as fp:
        records, _ = read_records(fp.read())
    rec = records[size]
    if key == "latency":
        return rec["time_us"]["median"]
    return rec[key]


class GpucommCheck(rfm.RunOnlyRegressionTest):
    """Base of every payload check.  Subclasses set ``op`` and a ``method`` parameter."""

    #: the payload operation (pingpong, allreduce, ...)
    op = variable(str)
    #: sizes to sweep, in the payload's syntax
    sizes = variable(str, value="1:1G")
    #: timed iterations per size (0: the payload's size-dependent default)
    iters = variable(int, value=0)
    #: untimed iterations per size (-1: the payload's default)
    warmup = variable(int, value=-1)
    #: python interpreter for the payload ('' : the environment's, else ReFrame's own)
    python = variable(str, value="")
    #: perf variable -> (size in bytes, record field or 'latency', unit)
    perf_points = variable(dict, value=PERF_POINTS)
    #: ranks per node: 0 = the operation's default (2 for a pair; every GPU of the node for
    #: the collectives, or 2 on a node without GPUs)
    ranks_per_node = variable(int, value=0)
    #: whether the default is every GPU of the node (collectives) or a pair (ping-pong)
    all_gpus = variable(bool, value=False)
    #: nodes to run on: ranks = num_nodes x ranks per node (a pair on 2 nodes: 1 rank each)
    num_nodes = variable(int, value=1)
    num_tasks = 2
    time_limit = "10m"
    tags = {"gpucomm"}
    maintainers = ["gpucomm"]

    @run_after("init")
    def set_requirements(self):
        systems, environs = METHOD_REQUIREMENTS[self.method]
        self.valid_systems = list(systems)
        self.valid_prog_environs = list(environs)
        self.descr = f"{self.op} with {self.method} ({self.num_tasks} ranks)"
        self.tags |= {self.op, self.method}
        self.keep_files = [RESULTS_FILE]

    @property
    def gpu_method(self):
        return self.method != "host"

    def gpus_per_node(self):
        devs = self.current_partition.select_devices("gpu")
        return devs[0].num_devices if devs else 0

    def skip_reason(self):
        """Why this method cannot run in this partition/environment, or None."""
        if not self.all_gpus and self.ranks_per_node == 0 and self.num_nodes > 2:
            return f"{self.op} is one pair of ranks: 1 or 2 nodes, not {self.num_nodes}"
        if self.gpu_method:
            have, need = self.gpus_per_node(), self.num_tasks_per_node
            if have < need:
                return (f"{self.method} needs {need} GPUs on a node; "
                        f"{self.current_partition.fullname} has {have}")
        if self.method == "gpu-aware-mpi" and self.op in ("allreduce", "alltoall"):
            level = self.current_environ.extras.get("gpu_aware_mpi_level", "full")
            if level != "full":
                return (f"the MPI of environment {self.current_environ.name} is GPU-aware for "
                        f"point-to-point only (level {level}): no {self.op} on device buffers")
        return None

    @run_after("setup")
    def set_tasks(self):
        gpus = self.gpus_per_node()
        if self.ranks_per_node > 0:
            per_node = self.ranks_per_node
        elif self.all_gpus and gpus >= 2:
            per_node = gpus
        else:
            per_node = 2 if self.num_nodes == 1 else 1
        self.num_tasks_per_node = per_node
        self.num_tasks = per_node * self.num_nodes

    @run_after("setup")
    def request_gpus(self):
        # becomes the partition's '_rfm_gpu' resource (e.g. --gpus-per-node) under Slurm
        if self.gpu_method:
            self.num_gpus_per_node = self.num_tasks_per_node

    @run_after("setup")
    def skip_unsupported(self):
        reason = self.skip_reason()
        self.skip_if(reason is not None, reason or "")

    @run_after("setup")
    def set_command(self):
        env_extras = self.current_environ.extras
        self.executable = self.python or env_extras.get("python") or sys.executable
        opts = ["-m", "gpucomm", self.op, "--method", self.method, "--sizes", self.sizes,
                "--json", RESULTS_FILE]
        if self.iters > 0:
            opts += ["--iters", str(self.iters)]
        if self.warmup >= 0:
            opts += ["--warmup", str(self.warmup)]
        # guard: a pair's busbw is bounded by its link, a collective's by all links of a GPU
        extras = self.current_partition.extras
        key = "gpu_bandwidth_GBps" if self.op in ("allreduce", "alltoall") else "link_bandwidth_GBps"
        limit = extras.get(key, extras.get("link_bandwidth_GBps"))
        if limit and self.gpu_method:
            opts += ["--max-bandwidth", str(limit)]
        self.executable_opts = opts

    @run_after("setup")
    def set_references(self):
        """External references (ReFrame 4.10 '$ref'): <reference dir>/<system>.yaml, indexed by
        partition and method.  The directory is RFM_REFERENCE_PREFIX if set, else
        GPUCOMM_REFERENCE_DIR, else config/references/ next to checks/."""
        import reframe.core.runtime as rt
        dirs = [rt.runtime().get_option("general/0/reference_prefix"),
                os.environ.get("GPUCOMM_REFERENCE_DIR"),
                os.path.join(self.prefix, os.pardir, "config", "references")]
        name = f"{self.current_system.name}.yaml"
        for d in filter(None, dirs):
            path = os.path.abspath(os.path.join(d, name))
            if os.path.exists(path):
                self.reference = {"$ref": path}
                break

    @run_before("run")
    def apply_site_options(self):
        """Site knobs from the partition's and the environment's ``extras``:

        * ``launcher_options``: list, added to every launch;
        * ``method_launcher_options``: {method or 'default': list}, added for this method
          (e.g. no per-task GPU isolation for ipc-copy);
        * ``job_options``: list of extra scheduler options;
        * ``method_env_vars``: {method or 'default': {VAR: value}}.
        """
        for extras in (self.current_partition.extras, self.current_environ.extras):
            self.job.launcher.options += list(extras.get("launcher_options", []))
            by_method = extras.get("method_launcher_options", {})
            self.job.launcher.options += list(by_method.get(self.method, by_method.get("default", [])))
            self.job.options += list(extras.get("job_options", []))
            env_by_method = extras.get("method_env_vars", {})
            self.env_vars.update(env_by_method.get(self.method, env_by_method.get("default", {})))

    @property
    def size_list(self):
        return parse_sizes(self.sizes)

    @sanity_function
    def validate(self):
        return payload_ok(str(self.stdout), str(self.stderr), self.size_list)

    @run_before("performance")
    def set_perf_variables(self):
        swept = set(self.size_list)
        self.perf_variables = {
            name: sn.make_performance_function(record_value(str(self.stdout), size, key), unit)
            for name, (size, key, unit) in self.perf_points.items() if size in swept
        }
