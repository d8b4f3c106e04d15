"""The health sweep (``reframe --mode health``): one launch per operation runs every method this
partition and environment offer, in turn (``gpucomm OP --method a,b,c``).

A nightly check of a node wants every method and every operation, fast: one payload launch per
method pays the interpreter, CUDA and NCCL start-up each time (a few seconds on a GPU node), so
the sweep pays it once per operation.  Few sizes (8 B latency, 1 MiB, 64 MiB), a time budget per
size (slow host-memory methods run fewer iterations, never fewer than 10), and the perf
variables are ``<method>_<point>`` (e.g. ``ccl_goodput_64MiB``) with references indexed by
partition and operation.

Which methods run is decided by rfm.availability, as for the per-method checks; a method left
out is named, with its reason, in the check's description.

Each method gets its own environment variables and GPU binding (the partition's and the
environment's method_env_vars, the ccl network proof): methods whose variables are the same share
a launch, the others run in further launches of the same job (rfm.mixins.env_groups), each after
its own preflight, with its variables set and the previous launch's unset, writing
gpucomm_results.<k>.json; the sanity requires every launch to finish and every method to pass.
A method the environment leaves out of the sweep (extras['sweep_left_out']) is named with its
reason, as one that cannot run.
"""

import os
import shlex

import reframe.utility.sanity as sn
from reframe.core.builtins import variable
from reframe.core.exceptions import ReframeError

from ..constants import BW, HOST, METHODS, PINGPONG
from ..contract import HEALTH_PERF_POINTS, RESULTS_FILE, by_method_size
from .availability import sweep_unavailable
from .base import GpucommCheck
from .sanity import point_value, records_of, sweep_ok


class SweepCheck(GpucommCheck):
    """Every offered method of one operation in one launch.  Subclasses give the ``operation``
    (a parameter): pingpong and bw on a pair of ranks, the others on every GPU of the node.

    ``operation`` is the parameter under the name users give it (``-n
    HealthCheck%operation=allreduce``; the references index by it).  requirements() copies it
    into GpucommCheck's ``op``, and everything after reads ``op``, as in every other check."""

    #: the methods to run, comma-separated ('' : every method the partition/environment offers)
    methods = variable(str, value="")
    method = ""
    sizes = "8,1M,64M"
    warmup = 2
    budget = 0.25
    perf_points = HEALTH_PERF_POINTS
    time_limit = "5m"
    #: bw's window, as checks/bw.py
    window = 8

    def requirements(self):
        self.op = self.operation  # the one read of the parameter: see the class docstring
        self.all_gpus = self.op not in (PINGPONG, BW)
        self.method_list = []
        return ["*"], ["+mpi"]

    def description(self):
        return f"{self.op} health sweep, every method offered"

    def more_tags(self):
        return {self.op, "health", "sweep"}

    def wanted_methods(self):
        """The methods -S methods asks for (every method if empty); a ReframeError naming the
        unknown ones (a typo must fail the run, not skip the sweep)."""
        wanted = [m.strip() for m in self.methods.split(",") if m.strip()] or list(METHODS)
        unknown = [m for m in wanted if m not in METHODS]
        if unknown:
            raise ReframeError(f"-S methods={self.methods}: unknown {', '.join(unknown)}; choose from "
                               f"{', '.join(METHODS)}")
        return wanted

    def check_variables(self):
        super().check_variables()
        self.wanted_methods()

    def offered_methods(self):
        """(methods to run, {method: why not}) for this partition and environment."""
        wanted = self.wanted_methods()
        run, left_out = [], {}
        for m in wanted:
            why = sweep_unavailable(m, self.op, self.current_partition, self.current_environ,
                                    self.num_tasks_per_node, self.multi_node)
            if why:
                left_out[m] = why
            else:
                run.append(m)
        return run, left_out

    def skip_reason(self):
        run, self.left_out = self.offered_methods()
        if not run:
            return "no method to run: " + "; ".join(f"{m}: {w}" for m, w in self.left_out.items())
        self.method_list = run
        self.method = ",".join(run)
        if self.left_out:
            self.descr += " (left out: " + "; ".join(f"{m}: {w}" for m, w in self.left_out.items()) + ")"
        return None

    @property
    def gpu_method(self):
        return any(m not in ("", HOST) for m in self.method.split(","))

    def run_methods(self):
        return list(self.method_list)

    def description_of_groups(self, groups):
        if len(groups) > 1:
            self.descr += " (launches: " + " | ".join(",".join(m) for m, _ in groups) + \
                          ": their environment variables differ)"

    def command(self):
        exe, opts = super().command()
        groups = self.launch_groups()
        self.description_of_groups(groups)
        if len(groups) > 1 and "--timeout" in opts:  # the watchdog shares the time limit
            i = opts.index("--timeout") + 1
            opts[i] = f"{max(30.0, float(opts[i]) / len(groups)):g}"
        opts[opts.index("--method") + 1] = ",".join(groups[0][0])
        return exe, opts

    def more_launches(self, groups):
        """Job-script lines for every launch after the first: unset what the previous one set
        and this one lacks, export this one's variables, preflight, launch."""
        current, lines = dict(groups[0][1]), []
        launcher = self.job.launcher.run_command(self.job)
        for k, (methods, env) in enumerate(groups[1:], 1):
            gone = sorted(v for v in current if v not in env)
            if gone:
                lines.append("unset " + " ".join(gone))
            lines += [f"export {v}={val}" for v, val in env.items() if current.get(v) != val]
            current = dict(env)
            lines += self.preflight_cmds(methods)
            opts = list(self.executable_opts)
            opts[opts.index("--method") + 1] = ",".join(methods)
            opts[opts.index("--json") + 1] = results = RESULTS_FILE.replace(".json", f".{k}.json")
            self.keep_files.append(results)
            lines.append(" ".join([launcher, self.executable] + [shlex.quote(o) for o in opts]))
        self.postrun_cmds = lines + list(self.postrun_cmds)
        self.launch_count = len(groups)

    def sanity_ok(self):
        return sn.all(self.sanity_steps([sweep_ok(str(self.stdout), str(self.stderr), self.method_list,
                                                  self.size_list, getattr(self, "launch_count", 1))]))

    def perf_functions(self):
        measured = {m: self.measured_sizes(m) for m in self.method_list}
        return {f"{m}_{name}": sn.make_performance_function(
                    point_value(str(self.stdout), (m, size), key, by_method_size), unit)
                for m in self.method_list
                for name, (size, key, unit) in self.perf_points.items() if size in measured[m]}

    def precision_records(self):
        """Each perf variable's record, as perf_functions reads it (by method and size)."""
        records = records_of(os.path.join(self.stagedir, str(self.stdout)), by_method_size)
        return {f"{m}_{name}": (records[(m, size)], key, unit) for m in self.method_list
                for name, (size, key, unit) in self.perf_points.items() if (m, size) in records}
