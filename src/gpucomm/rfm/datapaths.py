"""DataPathsBase: every GPU's own data paths (checks/datapaths.py), the payload's
``gpu-datapaths`` operation (payload/ops/datapaths.py) with one rank per GPU of one node.

Selected on every gpucomm partition: on one without GPUs it is a SKIP naming what is missing
(rfm.availability, the staging method's needs: a GPU partition, MPI and CuPy); one GPU is
enough.  Perf variables (GB/s) at each swept size of ``perf_sizes`` (where ``-S sizes`` sweeps
none of them: the largest swept size; label L), per path P
(constants.DATAPATHS, '-' written '_': h2d_ce, ..., local_ce), per GPU named by index and PCI
bus id (``gpuG_BUS``, the bus id's ':' written '-'):

* ``P_L_gpuG_BUS``: the GPU alone, host memory on its own NUMA node (goodput: S/t; bidir 2S/t);
* ``P_far_L_gpuG_BUS``: the same from the farthest NUMA node (``host_numa`` both or far);
* ``P_all_L_gpuG_BUS``: every GPU of the node at once (two GPUs or more);
* ``P_L_slowest`` (``P_far_L_slowest``, ``P_all_L_slowest``): the node's slowest GPU (two GPUs or
  more: with one, it would copy that GPU's variable and weigh twice in a verdict).

References: config/references/datapaths.yaml (``references_file``) by node class (the
partition's in config/nodeclasses.py, ``-S node_class=NAME`` overrides), under the base names
``P_L``, ``P_far_L``, ``P_all_L`` for every GPU and the slowest, read here (ReFrame's ``$ref``
cannot index by node class), each class with its link's nominal rate and source.  A class
without references passes on the run alone, saying so (the bring-up of docs/sites/*.md).
"""

import os

import reframe.utility.sanity as sn
from reframe.core.builtins import variable
from reframe.core.exceptions import ReframeError, SanityError

from ..constants import DATAPATH_LOCAL, DATAPATHS, GPU_DATAPATHS, METHOD_REQUIREMENTS, STAGING
from ..contract import parse_output
from ..errors import GpucommError
from ..sizes import parse_sizes, size_label
from .availability import unavailable
from .base import GpucommCheck, read_references
from .nodestate import load_classes
from .sanity import payload_ok, read_meta

NUMA_CHOICES = ("near", "far", "both")


def var_base(path, numa, scope, label):
    """The reference's base name of a record kind: P_L, P_far_L, P_all_L."""
    stem = path.replace("-", "_")
    kind = "_all" if scope == "all" else "_far" if numa == "far" else ""
    return f"{stem}{kind}_{label}"


def gpu_name(gpu, bus):
    return f"gpu{gpu}_{bus.replace(':', '-')}"


def read_records(stdout):
    with open(stdout) as fp:
        return parse_output(fp.read())[0]


def expected_cases(nsizes, paths, numa_labels, ngpus):
    """Records the payload writes: per size and path (and NUMA choice for the host paths), one
    per GPU alone, and one of all at once on two GPUs or more."""
    per = ngpus + (1 if ngpus > 1 else 0)
    return nsizes * sum(per * (1 if p == DATAPATH_LOCAL else numa_labels) for p in paths)


@sn.deferrable
def every_case_ok(stdout, want):
    """True if the payload wrote ``want`` validated records; else a SanityError."""
    records = read_records(stdout)
    good = [r for r in records if r.get("validated")]
    if len(good) != want or len(records) != want:
        raise SanityError(f"GPU data paths incomplete: {len(good)} of {want} cases validated")
    return True


def case_record(records, size, path, numa, scope, gpu):
    """The record of one GPU's value of one record kind (gpu None: the slowest GPU's) as
    (record, its goodput in GB/s): a GPU alone, its own record; every GPU at once, the case's
    record with that GPU's goodput (its ``gpu_results`` entry) in place of the case's."""
    found = []
    for rec in records:
        if rec["size"] != size or rec["path"] != path or rec["scope"] != scope:
            continue
        if path != DATAPATH_LOCAL and rec["numa"] != numa:
            continue
        if scope == "single":
            found.append((rec["gpu"], rec))
        else:
            found += [(g["gpu"], {**rec, "goodput_GBps": g["goodput_GBps"]}) for g in rec["gpu_results"]]
    mine = [r for g, r in found if gpu is None or g == gpu]
    if not mine:
        raise SanityError(f"no {path} {numa} {scope} record of GPU {gpu} at {size} B")
    return min(mine, key=lambda r: r["goodput_GBps"])


@sn.deferrable
def case_value(stdout, size, path, numa, scope, gpu):
    """One GPU's goodput (GB/s) of one record kind; gpu None: the slowest GPU's."""
    return case_record(read_records(stdout), size, path, numa, scope, gpu)["goodput_GBps"]


class DataPathsBase(GpucommCheck):
    """Every GPU's host <-> device and device-memory paths (see the module's docstring)."""

    op = GPU_DATAPATHS
    method = STAGING
    #: the full sweep (acceptance); the health mode sets one size (config/modes.py)
    sizes = "4K:1G:4"
    #: sizes with perf variables where swept
    perf_sizes = variable(str, value="256M")
    #: the paths measured, comma-separated (constants.DATAPATHS; '': all)
    paths = variable(str, value="")
    #: host memory on the GPU's own NUMA node (near), the farthest one with CPUs (far), or both
    host_numa = variable(str, value="both")
    #: the node class whose references apply ('': the partition's, config/nodeclasses.py)
    node_class = variable(str, value="")
    #: the node classes file (PARTITIONS: partition -> class) and the references by class
    classes_file = variable(str, value="")
    references_file = variable(str, value="")
    time_limit = "10m"

    def requirements(self):
        """Selected everywhere: a partition without a GPU is a SKIP with the reason."""
        return ["*"], list(METHOD_REQUIREMENTS[STAGING][1])

    def description(self):
        return "every GPU's data paths: host <-> device (copy engine, SM), device memory"

    def more_tags(self):
        return {self.op, "health"}

    def path_list(self):
        names = [p.strip() for p in self.paths.split(",") if p.strip()] or list(DATAPATHS)
        bad = [p for p in names if p not in DATAPATHS]
        if bad:
            raise ReframeError(f"-S paths={self.paths}: choose from {', '.join(DATAPATHS)}")
        return names

    def numa_labels(self):
        return ["near", "far"] if self.host_numa == "both" else [self.host_numa]

    def check_variables(self):
        super().check_variables()
        self.path_list()
        if self.host_numa not in NUMA_CHOICES:
            raise ReframeError(f"-S host_numa={self.host_numa}: choose {', '.join(NUMA_CHOICES)}")
        if not self.size_list:
            raise ReframeError(f"-S sizes={self.sizes}: none is a multiple of 16 B ({GPU_DATAPATHS}'s "
                               "kernels copy 16 bytes per thread)")
        try:
            parse_sizes(self.perf_sizes)
        except GpucommError as exc:
            raise ReframeError(f"-S perf_sizes={self.perf_sizes}: {exc}") from None
        if self.num_nodes != 1:
            raise ReframeError(f"-S num_nodes={self.num_nodes}: {GPU_DATAPATHS} is the GPUs of one node")

    @property
    def size_list(self):
        """The swept sizes the data paths take: multiples of 16 B (a mode's sweep for every
        check, -S sizes=8,1M,64M, leaves 8 B out here)."""
        return [s for s in parse_sizes(self.sizes) if s >= 16 and s % 16 == 0]

    def bandwidth_limit(self):
        """The payload's guard: the node class's host link ($nominal in the references, per
        direction, where a document gives it), else the payload's own (nvidia-smi's PCIe)."""
        path = self.references_file or self.repo_file("config", "references", "datapaths.yaml")
        if not os.path.exists(path):
            return None
        entry = (read_references(path).get(type(self).__name__) or {}).get(self.class_name()) or {}
        value, source = ((entry.get("$nominal") or {}).get("host_link") or [None, ""])[:2]
        return None if value is None or "UNCONFIRMED" in str(source) else value

    def command(self):
        """The base's command line, its sizes (and the soak's) those the data paths take."""
        exe, opts = super().command()
        swept = self.size_list
        opts[opts.index("--sizes") + 1] = ",".join(map(str, swept))
        if "--validate-sizes" in opts:
            at = opts.index("--validate-sizes")
            keep = [s for s in parse_sizes(opts[at + 1]) if s in swept]
            opts[at:at + 2] = ["--validate-sizes", ",".join(map(str, keep))] if keep else []
            if not keep:  # no soak size swept here: no soak
                at = opts.index("--validate-every")
                del opts[at:at + 2]
        opts += ["--host-numa", self.host_numa]
        if self.paths:
            opts += ["--paths", ",".join(self.path_list())]
        return exe, opts

    def set_tasks(self):
        """One rank per GPU of the node (one at least: a CPU partition skips)."""
        self.num_tasks = self.num_tasks_per_node = max(1, self.gpus_per_node())
        self.ranks_per_emulated_node = 0

    def skip_reason(self):
        return self.node_count_reason() or unavailable(
            STAGING, self.op, self.current_partition, self.current_environ, self.num_tasks_per_node,
            False, METHOD_REQUIREMENTS[STAGING])

    # ------------------------------------------------------------------ references

    def repo_file(self, *parts):
        here = os.path.dirname(os.path.abspath(self.prefix))
        while True:
            path = os.path.join(here, *parts)
            if os.path.exists(path) or os.path.dirname(here) == here:
                return path
            here = os.path.dirname(here)

    def class_name(self):
        """The partition's node class ('' where it has none)."""
        if self.node_class:
            return self.node_class
        path = self.classes_file or self.repo_file("config", "nodeclasses.py")
        try:
            return load_classes(path)[1].get(self.current_partition.fullname, "")
        except OSError:
            return ""

    def class_refs(self):
        """{base name: [value, lower, upper, unit]} of this partition's node class."""
        path = self.references_file or self.repo_file("config", "references", "datapaths.yaml")
        if not os.path.exists(path):
            return {}
        entry = (read_references(path).get(type(self).__name__) or {}).get(self.class_name()) or {}
        return {k: v for k, v in entry.items() if not k.startswith("$")}

    def perf_cases(self, gpus=()):
        """[(name, base, (size, path, numa, scope, gpu))] for the GPUs ``gpus`` ([(index, bus
        id)], from the results' meta; none before the run: the bases alone, with the slowest)."""
        swept, out = set(self.size_list), []
        n = self.num_tasks
        # none of perf_sizes swept (-S sizes=1M,64M): the largest swept size, not a run of no values
        for size in sorted(swept & set(parse_sizes(self.perf_sizes))) or sorted(swept)[-1:]:
            label = size_label(size)
            for path in self.path_list():
                kinds = [("device", "single")] if path == DATAPATH_LOCAL else \
                    [(numa, "single") for numa in self.numa_labels()]
                if n > 1:
                    kinds += [(numa, "all") for numa, _ in list(kinds)]
                for numa, scope in kinds:
                    base = var_base(path, numa, scope, label)
                    for gpu, bus in gpus:
                        out.append((f"{base}_{gpu_name(gpu, bus)}", base, (size, path, numa, scope, gpu)))
                    if len(gpus) != 1:  # one GPU: its own variable says it all
                        out.append((f"{base}_slowest", base, (size, path, numa, scope, None)))
        return out

    def perf_plan(self, gpus=()):
        """[(name, base, deferred value, unit)] (perf_cases)."""
        stdout = str(self.stdout)
        return [(name, base, case_value(stdout, *case), "GB/s") for name, base, case in self.perf_cases(gpus)]

    def precision_records(self):
        """Each perf variable's record (rfm.precision): a GPU alone, its own; every GPU at once,
        the case's (its samples are the slowest GPU's time per sample), in proportion to that
        GPU's goodput."""
        records, out = read_records(os.path.join(self.stagedir, str(self.stdout))), {}
        for name, _, case in self.perf_cases(self.run_gpus()):
            try:
                out[name] = (case_record(records, *case), "goodput_GBps", "GB/s")
            except SanityError:  # no such record: its precision unknown (the sanity says why)
                continue
        return out

    def missing_reference(self):
        refs, cls = self.class_refs(), self.class_name()
        if refs and {base for _, base, _, _ in self.perf_plan()} & set(refs):
            return ""
        where = self.current_partition.fullname
        return f"no reference for {type(self).__name__} on {where} (node class {cls or 'none'}) yet"

    def set_references(self):
        self.reference = self.references_of(self.perf_plan())

    def references_of(self, plan):
        refs = self.class_refs()
        table = {name: tuple(refs[base]) for name, base, _, _ in plan if base in refs}
        return {self.current_partition.fullname: table} if table else {}

    # ------------------------------------------------------------------ sanity, performance

    def sanity_ok(self):
        labels = len(self.numa_labels())
        want = expected_cases(len(self.size_list), self.path_list(), labels, self.num_tasks)
        return sn.all(self.sanity_steps([payload_ok(str(self.stdout), str(self.stderr), self.size_list),
                                         every_case_ok(str(self.stdout), want)]))

    def run_gpus(self):
        """[(index, PCI bus id)] of the finished run's GPUs (its meta)."""
        return [(g["gpu"], g["bus_id"]) for g in read_meta(self.results_path()).get("gpus", [])]

    def perf_functions(self):
        plan = self.perf_plan(self.run_gpus())
        self.reference = self.references_of(plan)
        return {name: sn.make_performance_function(value, unit) for name, _, value, unit in plan}
