"""ReFrame base of the health sweep (``reframe --mode health``): one launch per operation runs
every method this partition and environment offer, in turn (``gpucomm OP --method a,b,c``).

A nightly check of a node wants every method and every operation, fast: one payload launch
per method pays the interpreter, CUDA and NCCL start-up each time (a few seconds on a GPU node),
so the sweep pays it once per operation.  Few sizes (8 B latency, 1 MiB, 64 MiB), a time
budget per size (slow host-memory methods run fewer iterations, never fewer than 10), and the
perf variables are ``<method>_<point>`` (e.g. ``ccl_goodput_64MiB``) with references indexed
by partition and operation.

Which methods run is decided from the partition's and environment's features the same way the
per-method checks' valid_systems/valid_prog_environs are (rfm.METHOD_REQUIREMENTS); a method
left out is named, with its reason, in the check's description and the job's stdout.
"""

import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, sanity_function, variable
from reframe.core.exceptions import SanityError

from . import METHODS
from .rfm import METHOD_REQUIREMENTS, PERF_POINTS, GpucommCheck, finished_run, read_all_records
from .sizes import size_label

#: the sweep's points: latency at 8 B, goodput at 1 MiB and 64 MiB
HEALTH_PERF_POINTS = {k: PERF_POINTS[k] for k in ("latency_8B", "goodput_1MiB", "goodput_64MiB")}


def features_match(specs, features):
    """Whether ``features`` satisfy one of ReFrame's feature specs ('*', '+a +b')."""
    return any(spec == "*" or all(tok[1:] in features for tok in spec.split() if tok.startswith("+"))
               for spec in specs)


@sn.deferrable
def sweep_ok(stdout, stderr, methods, sizes):
    """True if every method ran and validated every size; else a SanityError naming what not."""
    recs, summary = finished_run(stdout, stderr, read_all_records)
    status = summary.get("methods") or {summary.get("method"): "ok"}
    bad = [f"{m}: {status.get(m, 'did not run')}" for m in methods if status.get(m) != "ok"]
    if bad:
        raise SanityError("methods that did not run: " + "; ".join(bad))
    missing = [f"{m} {size_label(s)}" for m in methods for s in sizes
               if not recs.get((m, s), {}).get("validated")]
    if missing:
        raise SanityError(f"not validated: {', '.join(missing)}")
    return True


@sn.deferrable
def sweep_value(stdout, method, size, key):
    with open(stdout) as fp:
        rec = read_all_records(fp.read())[0][(method, size)]
    return rec["time_us"]["median"] if key == "latency" else rec[key]


class SweepCheck(GpucommCheck):
    """Every offered method of one operation in one launch.  Subclasses give the ``operation``
    (a parameter): pingpong on a pair of ranks, the others on every GPU of the node."""

    #: the methods to run, comma-separated ('' : every method the partition/environment offers)
    methods = variable(str, value="")
    method = ""
    sizes = "8,1M,64M"
    warmup = 2
    budget = 0.25
    perf_points = HEALTH_PERF_POINTS
    time_limit = "5m"

    @run_after("init")
    def set_requirements(self):
        self.op = self.operation
        self.all_gpus = self.operation not in ("pingpong",)
        self.valid_systems = ["*"]
        self.valid_prog_environs = ["+mpi"]
        self.descr = f"{self.op} health sweep, every method offered"
        self.tags |= {self.op, "health", "sweep"}
        self.keep_files = ["gpucomm_results.json"]

    def offered_methods(self):
        """(methods to run, {method: why not}) for this partition and environment."""
        part, env = self.current_partition, self.current_environ
        wanted = [m.strip() for m in self.methods.split(",") if m.strip()] or list(METHODS)
        unknown = [m for m in wanted if m not in METHODS]
        if unknown:
            raise ValueError(f"-S methods: unknown {', '.join(unknown)}; choose from {', '.join(METHODS)}")
        run, left_out = [], {}
        gpus, need = self.gpus_per_node(), self.num_tasks_per_node
        level = env.extras.get("gpu_aware_mpi_level", "full")
        for m in wanted:
            systems, environs = METHOD_REQUIREMENTS[m]
            if not features_match(systems, set(part.features)):
                left_out[m] = f"partition {part.fullname} lacks {' or '.join(systems)}"
            elif not features_match(environs, set(env.features)):
                left_out[m] = f"environment {env.name} lacks {' or '.join(environs)}"
            elif m != "host" and gpus < need:
                left_out[m] = f"needs {need} GPUs on a node, {part.fullname} has {gpus}"
            elif m == "ipc-copy" and self.multi_node:
                left_out[m] = "moves data between the GPUs of one node only"
            elif m == "gpu-aware-mpi" and self.op in ("allreduce", "alltoall") and level != "full":
                left_out[m] = f"MPI GPU-aware for point-to-point only (level {level})"
            else:
                run.append(m)
        return run, left_out

    @run_after("setup", always_last=True)
    def choose_methods(self):
        try:
            run, self.left_out = self.offered_methods()
        except ValueError as exc:
            self.skip(str(exc))
        self.skip_if(not run, "no method to run: " + "; ".join(f"{m}: {w}" for m, w in self.left_out.items()))
        self.method_list = run
        self.method = ",".join(run)
        if self.left_out:
            self.descr += " (left out: " + "; ".join(f"{m}: {w}" for m, w in self.left_out.items()) + ")"
        self.set_command()   # again, now with the methods (and the guard if a GPU method runs)
        self.request_gpus()

    def skip_reason(self):
        return None  # decided per method in choose_methods

    @property
    def gpu_method(self):
        return any(m not in ("", "host") for m in self.method.split(","))

    def site_method(self):
        # one launch for every method: the binding that lets ipc-copy's ranks see each other's
        # GPUs (every rank still drives GPU = local rank) suits all of them
        return "ipc-copy" if "ipc-copy" in self.method_list else "default"

    @sanity_function
    def validate(self):
        return sweep_ok(str(self.stdout), str(self.stderr), self.method_list, self.size_list)

    @run_before("performance")
    def set_perf_variables(self):
        swept = set(self.size_list)
        self.perf_variables = {
            f"{m}_{name}": sn.make_performance_function(sweep_value(str(self.stdout), m, size, key), unit)
            for m in self.method_list
            for name, (size, key, unit) in self.perf_points.items() if size in swept
        }
