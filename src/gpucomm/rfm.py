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
from reframe.core.exceptions import ReframeError, SanityError

from .engine import parse_output
from .errors import GpucommError
from .sizes import parse_sizes, size_label
from .topology import PLACEMENTS

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
#: the scaling checks' points: all-to-all at 2 MiB blocks (Fig. 9), all-reduce at 1 GiB (Fig. 10)
SCALING_PERF_POINTS = {
    "goodput_2MiB": (2 << 20, "goodput_GBps", "GB/s"),
    "busbw_2MiB": (2 << 20, "busbw_GBps", "GB/s"),
    "goodput_1GiB": (1 << 30, "goodput_GBps", "GB/s"),
    "busbw_1GiB": (1 << 30, "busbw_GBps", "GB/s"),
}


def read_records(text):
    """The payload's per-size records by size, and its summary (engine.parse_output)."""
    records, summary = parse_output(text)
    return {rec["size"]: rec for rec in records}, summary


def read_all_records(text):
    """Like read_records, by (method, size): the records of a run of several methods."""
    records, summary = parse_output(text)
    return {(rec["method"], rec["size"]): rec for rec in records}, summary


def payload_error(stderr_path):
    try:
        with open(stderr_path) as fp:
            lines = [ln.strip() for ln in fp if "gpucomm: error:" in ln]
    except OSError:
        return ""
    return lines[0].split("gpucomm: error:", 1)[1].strip() if lines else ""


def finished_run(stdout, stderr, reader):
    """(records, summary) of a payload run that finished without an error, read by ``reader``
    (read_records, read_all_records); else a SanityError with the payload's reason."""
    try:
        with open(stdout) as fp:
            records, summary = reader(fp.read())
    except OSError as exc:
        raise SanityError(f"no payload output: {exc}")
    if summary is None:
        reason = payload_error(stderr) or "no GPUCOMM-DONE line (the payload crashed or was killed)"
        raise SanityError(f"payload did not finish: {reason}")
    if not summary.get("ok"):
        raise SanityError(f"payload failed: {summary.get('error') or payload_error(stderr)}")
    return records, summary


@sn.deferrable
def payload_ok(stdout, stderr, sizes):
    """True if the payload finished and validated every size; else a SanityError with its reason."""
    records, _ = finished_run(stdout, stderr, read_records)
    missing = [s for s in sizes if s not in records or not records[s].get("validated")]
    if missing:
        raise SanityError(f"sizes not validated: {', '.join(size_label(s) for s in missing)}")
    return True


@sn.deferrable
def placement_ok(results_path, wanted):
    """True if the payload's nodes sit where ``wanted`` (a placement) asked, or where that cannot
    be told (no topology information); else a SanityError naming the nodes and their distance."""
    try:
        with open(results_path) as fp:
            placement = json.load(fp)["meta"]["placement"]
    except (OSError, ValueError, KeyError) as exc:
        raise SanityError(f"no placement record in {os.path.basename(results_path)}: {exc}")
    got = placement["distance"]
    if got not in ("unknown", wanted):
        nodes = ", ".join(f"{h} ({a})" for h, a in zip(placement["hosts"], placement["topology_addr"]))
        raise SanityError(f"placement {wanted} asked for, but the nodes are {got}: {nodes} "
                          f"({placement['source']})")
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
    #: iterations per timed sample (0: the payload's size-dependent default)
    batch = variable(int, value=0)
    #: timed seconds per size: fewer iterations where one is slow (0: no budget)
    budget = variable(float, value=0.0)
    #: the timed loop as a CUDA/HIP graph where the method allows it: auto, on, off
    graph = variable(str, value="auto")
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
    #: run the num_nodes "nodes" as groups of ranks on one real node (the payload's
    #: --ranks-per-node): the multi-node logic tested on one machine
    emulate_nodes = variable(bool, value=False)
    #: where the nodes of a multi-node job sit on the network: 'any', or one of
    #: gpucomm.topology.PLACEMENTS, requested through the partition's extras['placement_options']
    #: and checked after the run where Slurm tells the topology (SLURM_TOPOLOGY_ADDR)
    placement = variable(str, value="any")
    #: explicit Slurm node list for a multi-node job (e.g. nid[001056,001058]); replaces the
    #: partition's placement option
    nodelist = variable(str, value="")
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

    @property
    def emulated(self):
        """Whether the job's nodes are rank groups on one real node."""
        return self.emulate_nodes and self.num_nodes > 1

    @property
    def multi_node(self):
        """Whether the job spans several real nodes."""
        return self.num_nodes > 1 and not self.emulate_nodes

    def placement_options(self):
        """Scheduler options that put the job's nodes where ``placement`` asks (None: the
        partition has no way to ask for it)."""
        if not self.multi_node:
            return []
        if self.nodelist:
            return [f"--nodelist={self.nodelist}"]
        if self.placement == "any":
            return []
        return self.current_partition.extras.get("placement_options", {}).get(self.placement)

    def skip_reason(self):
        """Why this method cannot run in this partition/environment, or None."""
        part = self.current_partition
        if not self.all_gpus and self.ranks_per_node == 0 and self.num_nodes > 2:
            return f"{self.op} is one pair of ranks: 1 or 2 nodes, not {self.num_nodes}"
        nodes = part.extras.get("nodes")
        if self.multi_node and nodes is not None and self.num_nodes > nodes:
            return (f"{part.fullname} has {nodes} node(s), not {self.num_nodes}: -S emulate_nodes=y "
                    "runs the nodes as groups of ranks on one node")
        if self.multi_node and self.method == "ipc-copy":
            return "ipc-copy moves data between the GPUs of one node: no multi-node run"
        if self.placement_options() is None:
            return (f"{part.fullname} has no scheduler option for placement {self.placement} "
                    "(extras['placement_options']): give the nodes with -S nodelist=...")
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
    def check_variables(self):
        """Every variable a user can set with -S, checked once with a one-line reason."""
        if self.placement not in ("any",) + PLACEMENTS:
            raise ReframeError(f"-S placement={self.placement}: choose any, {', '.join(PLACEMENTS)}")
        try:
            parse_sizes(self.sizes)
        except GpucommError as exc:
            raise ReframeError(f"-S sizes={self.sizes}: {exc}") from None
        for name, low in (("iters", 0), ("warmup", -1), ("batch", 0), ("budget", 0.0),
                          ("ranks_per_node", 0), ("num_nodes", 1)):
            if not getattr(self, name) >= low:  # NaN fails too
                raise ReframeError(f"-S {name}={getattr(self, name)}: must be >= {low}")
        if self.graph not in ("auto", "on", "off"):
            raise ReframeError(f"-S graph={self.graph}: choose auto, on or off")

    @run_after("setup")
    def set_tasks(self):
        gpus = self.gpus_per_node()
        if self.ranks_per_node > 0:
            per_node = self.ranks_per_node
        elif self.all_gpus:
            per_node = gpus if gpus >= 2 else 2
        else:
            per_node = 2 if self.num_nodes == 1 else 1
        self.ranks_per_emulated_node = per_node if self.emulated else 0
        self.num_tasks = per_node * self.num_nodes
        self.num_tasks_per_node = self.num_tasks if self.emulated else per_node

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
        if self.batch > 0:
            opts += ["--batch", str(self.batch)]
        if self.budget > 0:
            opts += ["--budget", f"{self.budget:g}"]
        if self.graph != "auto":
            opts += ["--graph", self.graph]
        limit_s = self.time_limit
        if limit_s:  # the payload's watchdog ends a hang before the scheduler does, saying where
            opts += ["--timeout", f"{max(30.0, 0.9 * float(limit_s) - 15):g}"]
        if self.emulated:
            opts += ["--ranks-per-node", str(self.ranks_per_emulated_node)]
        limit = self.bandwidth_limit()
        if limit and self.gpu_method:
            opts += ["--max-bandwidth", f"{limit:g}"]
        self.executable_opts = opts

    def bandwidth_limit(self):
        """The payload's guard (GB/s) from the partition's extras, or None: a pair's busbw is
        bounded by its link, a collective's by all links of a GPU, a multi ping-pong's (all pairs
        together) by the node's network (or, emulated on one node, by P pair links)."""
        extras = self.current_partition.extras
        if self.op == "multi-pingpong" and self.multi_node:
            return extras.get("network_bandwidth_GBps")
        key = "gpu_bandwidth_GBps" if self.op in ("allreduce", "alltoall") else "link_bandwidth_GBps"
        limit = extras.get(key, extras.get("link_bandwidth_GBps"))
        if limit and self.op == "multi-pingpong":
            limit *= self.num_tasks // 2
        return limit

    @run_after("setup")
    def set_references(self):
        """External references (ReFrame 4.10 '$ref'): <reference dir>/<system>.yaml, indexed by
        partition and method.  The directory is RFM_REFERENCE_PREFIX if set, else
        GPUCOMM_REFERENCE_DIR, else config/references/ next to checks/."""
        path = self.reference_file()
        if path:
            self.reference = {"$ref": path}

    def reference_file(self):
        """The system's reference YAML (see set_references), or None."""
        import reframe.core.runtime as rt
        dirs = [rt.runtime().get_option("general/0/reference_prefix"),
                os.environ.get("GPUCOMM_REFERENCE_DIR"),
                os.path.join(self.prefix, os.pardir, "config", "references")]
        name = f"{self.current_system.name}.yaml"
        for d in filter(None, dirs):
            path = os.path.abspath(os.path.join(d, name))
            if os.path.exists(path):
                return path
        return None

    @run_before("run")
    def apply_site_options(self):
        """Site knobs from the partition's and the environment's ``extras``:

        * ``launcher_options``: list, added to every launch;
        * ``method_launcher_options``: {method or 'default': list}, added for this method
          (e.g. no per-task GPU isolation for ipc-copy);
        * ``job_options``: list of extra scheduler options;
        * ``method_env_vars``: {method or 'default': {VAR: value}}.
        """
        self.job.options += self.placement_options()
        for extras in (self.current_partition.extras, self.current_environ.extras):
            self.job.launcher.options += list(extras.get("launcher_options", []))
            by_method = extras.get("method_launcher_options", {})
            key = self.site_method()
            self.job.launcher.options += list(by_method.get(key, by_method.get("default", [])))
            self.job.options += list(extras.get("job_options", []))
            env_by_method = extras.get("method_env_vars", {})
            self.env_vars.update(env_by_method.get(key, env_by_method.get("default", {})))

    def site_method(self):
        """The method whose site options (method_launcher_options, method_env_vars) apply."""
        return self.method

    @property
    def size_list(self):
        return parse_sizes(self.sizes)

    @sanity_function
    def validate(self):
        ok = payload_ok(str(self.stdout), str(self.stderr), self.size_list)
        if not self.multi_node or self.placement == "any":
            return ok
        return sn.all([ok, placement_ok(os.path.join(self.stagedir, RESULTS_FILE), self.placement)])

    @run_before("performance")
    def set_perf_variables(self):
        swept = set(self.size_list)
        self.perf_variables = {
            name: sn.make_performance_function(record_value(str(self.stdout), size, key), unit)
            for name, (size, key, unit) in self.perf_points.items() if size in swept
        }
