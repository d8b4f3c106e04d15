"""The base of every payload check (checks/*.py build on it, hpctestlib style: no
@simple_test here, every variable documented).

A check sets ``op`` and a ``method`` (usually a parameter); this base turns that into the
payload's command line, the partitions and environments it needs (by feature), a sanity function
that requires every size to be validated, and perf variables read from the payload's records.

The pipeline is one hook per stage, each calling named steps that a subclass extends with
``super()`` rather than replacing hooks:

* init: ``requirements()`` -> valid_systems / valid_prog_environs, ``description()``;
* setup: ``check_variables()``, ``set_tasks()``, ``skip_reason()`` (rfm.availability),
  ``request_gpus()``, ``command()`` -> executable and options, ``set_references()``;
* sanity: ``sanity_ok()``; performance: ``perf_functions()``.
"""

import os
import sys

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, sanity_function, variable
from reframe.core.exceptions import ReframeError

from ..constants import (ANY_PLACEMENT, COLLECTIVES, HOST, METHOD_REQUIREMENTS, MULTI_PINGPONG,
                         PLACEMENTS, Extras)
from ..contract import PERF_POINTS, RESULTS_FILE
from ..errors import GpucommError
from ..sizes import parse_sizes
from .availability import gpus_per_node, unavailable
from .mixins import MultiNode, SiteOptions
from .sanity import payload_ok, placement_ok, point_value


class GpucommCheck(rfm.RunOnlyRegressionTest, SiteOptions, MultiNode):
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
    #: python interpreter for the payload ('' : the environment's extras['python'], else
    #: ReFrame's own)
    python = variable(str, value="")
    #: perf variable -> (size in bytes, record field or 'latency', unit)
    perf_points = variable(dict, value=PERF_POINTS)
    #: ranks per node: 0 = the operation's default (2 for a pair; every GPU of the node for
    #: the collectives, or 2 on a node without GPUs)
    ranks_per_node = variable(int, value=0)
    #: whether the default is every GPU of the node (collectives) or a pair (ping-pong)
    all_gpus = variable(bool, value=False)
    num_tasks = 2
    time_limit = "10m"
    tags = {"gpucomm"}
    maintainers = ["gpucomm"]

    # ------------------------------------------------------------------ the stages

    @run_after("init")
    def init_check(self):
        self.valid_systems, self.valid_prog_environs = self.requirements()
        self.descr = self.description()
        self.tags |= self.more_tags()
        self.keep_files = [RESULTS_FILE]

    @run_after("setup")
    def setup_check(self):
        self.check_variables()
        self.set_tasks()
        reason = self.skip_reason()
        self.skip_if(reason is not None, reason or "")
        self.request_gpus()
        self.executable, self.executable_opts = self.command()
        self.set_references()

    @sanity_function
    def validate(self):
        return self.sanity_ok()

    @run_before("performance")
    def set_perf_variables(self):
        self.perf_variables = self.perf_functions()

    # ------------------------------------------------------------------ init steps

    def requirements(self):
        """(valid_systems, valid_prog_environs) of the method (constants.METHOD_REQUIREMENTS)."""
        systems, environs = METHOD_REQUIREMENTS[self.method]
        return list(systems), list(environs)

    def description(self):
        return f"{self.op} with {self.method} ({self.num_tasks} ranks)"

    def more_tags(self):
        return {self.op, self.method}

    # ------------------------------------------------------------------ setup steps

    @property
    def gpu_method(self):
        return self.method != HOST

    def gpus_per_node(self):
        return gpus_per_node(self.current_partition)

    def check_variables(self):
        """Every variable a user can set with -S, checked once with a one-line reason."""
        if self.placement not in (ANY_PLACEMENT,) + PLACEMENTS:
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

    def skip_reason(self):
        """Why this check cannot run in this partition/environment, or None."""
        if not self.all_gpus and self.ranks_per_node == 0 and self.num_nodes > 2:
            return f"{self.op} is one pair of ranks: 1 or 2 nodes, not {self.num_nodes}"
        return self.node_count_reason() or unavailable(
            self.method, self.op, self.current_partition, self.current_environ,
            self.num_tasks_per_node, self.multi_node)

    def request_gpus(self):
        # becomes the partition's '_rfm_gpu' resource (e.g. --gpus-per-node) under Slurm
        if self.gpu_method:
            self.num_gpus_per_node = self.num_tasks_per_node

    def interpreter(self):
        return self.python or self.current_environ.extras.get(Extras.PYTHON) or sys.executable

    def command(self):
        """(executable, options): the payload's command line."""
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
        return self.interpreter(), opts

    def bandwidth_limit(self):
        """The payload's guard (GB/s) from the partition's extras, or None: a pair's busbw is
        bounded by its link, a collective's by all links of a GPU, a multi ping-pong's (all pairs
        together) by the node's network (or, emulated on one node, by P pair links)."""
        extras = self.current_partition.extras
        if self.op == MULTI_PINGPONG and self.multi_node:
            return extras.get(Extras.NETWORK_BANDWIDTH)
        key = Extras.GPU_BANDWIDTH if self.op in COLLECTIVES else Extras.LINK_BANDWIDTH
        limit = extras.get(key, extras.get(Extras.LINK_BANDWIDTH))
        if limit and self.op == MULTI_PINGPONG:
            limit *= self.num_tasks // 2
        return limit

    def scheduler_options(self):
        return list(self.placement_options() or [])

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

    # ------------------------------------------------------------------ sanity, performance

    @property
    def size_list(self):
        return parse_sizes(self.sizes)

    def results_path(self):
        return os.path.join(self.stagedir, RESULTS_FILE)

    def sanity_ok(self):
        ok = payload_ok(str(self.stdout), str(self.stderr), self.size_list)
        if not self.multi_node or self.placement == ANY_PLACEMENT:
            return ok
        return sn.all([ok, placement_ok(self.results_path(), self.placement)])

    def perf_functions(self):
        swept = set(self.size_list)
        return {name: sn.make_performance_function(point_value(str(self.stdout), size, key), unit)
                for name, (size, key, unit) in self.perf_points.items() if size in swept}
