"""The base of every payload check (checks/*.py build on it, hpctestlib style: no
@simple_test here, every variable documented).

A check sets ``op`` and a ``method`` (usually a parameter); this base turns that into the
payload's command line, the partitions and environments it needs (by feature), a sanity function
that requires every size to be validated, and perf variables read from the payload's records.

The pipeline is one hook per stage, each calling named steps that a subclass extends with
``super()`` rather than replacing hooks:

* init: ``requirements()`` -> valid_systems / valid_prog_environs (rfm.availability.selection:
  the partitions of gpucomm's configuration with the features, every environment),
  ``description()``;
* setup: ``check_variables()``, ``set_tasks()``, ``environment_error()`` (no MPI: a failure),
  ``skip_reason()`` (rfm.availability: a SKIP with the reason),
  ``request_gpus()``, ``command()`` -> executable and options, ``set_references()``;
* sanity: ``sanity_ok()``; performance: ``perf_functions()``.
"""

import copy
import functools
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, sanity_function, variable
from reframe.core.exceptions import ReframeError

from ..constants import (
    ANY_PLACEMENT,
    CCL,
    COLLECTIVES,
    GPU_AWARE_MPI,
    HOST,
    METHOD_REQUIREMENTS,
    MULTI_PINGPONG,
    PAPER_REFERENCES,
    PAYLOAD_TIMEOUT_CEILING_S,
    PLACEMENTS,
    Extras,
)
from ..contract import PAYLOAD_OPTIONS, PERF_POINTS, RESULTS_FILE
from ..errors import GpucommError
from ..metrics import busbw_is_goodput
from ..sizes import parse_sizes
from . import setvars
from .availability import gpus_per_node, missing_mpi, selection, unavailable, warn_unselected
from .hooks import hook_error
from .mixins import NCCL_DEBUG_GLOB, MultiNode, SiteOptions, site_interpreter
from .precision import PrecisionRecord
from .runlock import RunLock
from .sanity import ccl_net_ok, memory_cap, payload_ok, point_value, preflight_ok, records_of
from .scope import DistributeScope
from .software import SoftwareRecord
from .watch import WatchRun


def copied_points(op, nranks, points):
    """The names of ``points`` whose value is by construction another's, left out of the perf
    variables (a copy weighs twice in a verdict): a bus bandwidth beside the goodput of the same
    size where gpucomm.metrics makes the two one number for ``op`` on ``nranks`` ranks (all-to-all:
    always, S (n-1) / t both; all-reduce: 2 ranks, where 2(n-1)/n is 1)."""
    goodput = {size for size, key, _ in points.values() if key == "goodput_GBps"}
    out = set()
    for name, (size, key, _) in points.items():
        if key != "busbw_GBps" or size not in goodput:
            continue
        if busbw_is_goodput(op, size, nranks):
            out.add(name)
    return out


def contact():
    """The project's maintainers as 'name <email>' (pyproject.toml's maintainers, through the
    installed package's metadata; a source checkout without metadata reads pyproject.toml)."""
    from importlib import metadata
    try:
        said = metadata.metadata("gpucomm").get_all("Maintainer-email") or []
    except metadata.PackageNotFoundError:
        said = []
    if said:
        return ", ".join(said)
    path = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, os.pardir, "pyproject.toml")
    try:
        import tomllib
        with open(path, "rb") as fp:
            people = tomllib.load(fp)["project"]["maintainers"]
        return ", ".join(f"{p['name']} <{p['email']}>" for p in people)
    except (ImportError, OSError, KeyError):
        return "gpucomm"


def read_references(path):
    """The reference file ``path`` as a dict ({} if empty): a copy of the parse cached per file
    version (every test case of a session reads its system's file several times)."""
    st = os.stat(path)
    return copy.deepcopy(_parsed_yaml(os.path.abspath(path), st.st_mtime_ns, st.st_size))


@functools.lru_cache(maxsize=32)
def _parsed_yaml(path, mtime_ns, size):
    """``path`` parsed (libyaml's loader where PyYAML has it), once per (mtime, size)."""
    import yaml
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path) as fp:
        return yaml.load(fp, Loader=loader) or {}


def information_only(node):
    """A check's entry of a reference file with its bounds taken off: ReFrame shows each value
    beside the measurement and never fails on it ('$index' kept; the leaves, at the index's
    depth, are [value, lower, upper, unit])."""
    depth = len(node.get("$index", ["$partition"]))

    def walk(d, level):
        if level == depth:
            return {var: (ref[0], None, None, *ref[3:]) for var, ref in d.items()}
        return {k: walk(v, level + 1) for k, v in d.items() if k != "$index"}

    refs = walk(node, 0)
    return {"$index": tuple(node["$index"]), **refs} if "$index" in node else refs


def references_dir(start):
    """The config/references/ directory of the repository holding ``start`` (a check's
    directory): the nearest one in ``start`` or above it, or None."""
    here = os.path.abspath(start)
    while True:
        path = os.path.join(here, "config", "references")
        if os.path.isdir(path):
            return path
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def option_type(option):
    """The type of a check's variable for a payload option (contract.PayloadOption.var_type):
    a -S value that does not convert fails in one line naming it (rfm.setvars)."""
    if option.var_type == "integer":
        return setvars.integer(option.variable)
    if option.var_type == "real":
        return setvars.real(option.variable)
    return str


def declare_option_variables(namespace):
    """Declare in a check class's ``namespace`` (its body's locals(), which ReFrame's metaclass
    provides) one variable per payload option that has one (contract.PAYLOAD_OPTIONS)."""
    for option in PAYLOAD_OPTIONS:
        if option.variable:
            namespace[option.variable] = variable(option_type(option), value=option.unset)


def soak_sizes(validate_sizes, sizes):
    """The swept sizes the soak applies to: every one ('' ), else those of ``validate_sizes``
    that ``sizes`` sweeps (a mode sets one list for checks of different sweeps)."""
    swept = parse_sizes(sizes)
    return swept if not validate_sizes else [s for s in parse_sizes(validate_sizes) if s in swept]


def soak_options(every, validate_sizes, sizes):
    """The payload's soak options (--validate-every, --validate-sizes), or [] without a soak
    or where the check sweeps none of ``validate_sizes``."""
    chosen = soak_sizes(validate_sizes, sizes) if every > 0 else []
    if not chosen:
        return []
    opts = ["--validate-every", str(every)]
    return opts + (["--validate-sizes", ",".join(map(str, chosen))] if validate_sizes else [])


class GpucommCheck(rfm.RunOnlyRegressionTest, SiteOptions, MultiNode, RunLock, WatchRun, DistributeScope,
                   SoftwareRecord, PrecisionRecord):
    """Base of every payload check.  Subclasses set ``op`` and a ``method`` parameter."""

    #: the payload operation (pingpong, allreduce, ...)
    op = variable(str)
    #: whether a default sweep may stop at the memory's limit (False: a check whose sanity
    #: needs every size of its default, the noise study's two victim sizes)
    fits_memory = True
    #: the payload's options that a check sets, one variable each, generated from their rows of
    #: contract.PAYLOAD_OPTIONS (each row's help says what it does; its ``unset`` value leaves
    #: the payload's default; -S values outside its kind's range or choices fail in one line,
    #: check_variables): sizes (the sizes to sweep, in the payload's syntax, default 1:1G; the
    #: check's own, not given with -S, are a default sweep: the payload stops it at the largest
    #: size the rank's memory share allows, --fit-memory, fits_memory, saying so; sizes given
    #: with -S must fit), iters (0), warmup (-1), batch (0), budget (0.0: no budget),
    #: precision_target (the median's relative 95 % half-width a size is sampled to, 0: off,
    #: -1: the payload's default by size), graph (auto, on, off), window (bw's messages per
    #: window, 0), loop (auto, numba-mpi, mpi4py), validate_every (the soak: the data of every
    #: timed sample holding a multiple of N among its iterations checked too, 0: once per size),
    #: validate_sizes (the sizes the soak applies to, '': every swept size; a check that sweeps
    #: none fails in setup unless soak_where_swept)
    declare_option_variables(locals())
    #: a mode's soak (one validate_sizes for checks of every sweep): a check that sweeps none of
    #: validate_sizes runs without the soak instead of failing
    soak_where_swept = variable(setvars.boolean("soak_where_swept"), value=False)
    #: python interpreter for the payload ('' : the environment's extras['python'], else
    #: ReFrame's own)
    python = variable(str, value="")
    #: perf variable -> (size in bytes, record field or 'latency', unit)
    perf_points = variable(dict, value=PERF_POINTS)
    #: ranks per node: 0 = the operation's default (2 for a pair; every GPU of the node for
    #: the collectives, or 2 on a node without GPUs)
    ranks_per_node = variable(setvars.integer("ranks_per_node"), value=0)
    #: whether the default is every GPU of the node (collectives) or a pair (ping-pong)
    all_gpus = variable(setvars.boolean("all_gpus"), value=False)
    #: run ``gpucomm preflight`` in the job script before the launch (site.preflight): a
    #: missing interpreter, mpi4py, GTL, cupy or NCCL/RCCL ends the job in one line
    preflight = variable(setvars.boolean("preflight"), value=True)
    #: what the check's references are where they do not judge the run (set at setup, in the
    #: perflog): '' when they judge it, else "no reference ... yet" or "the paper's figures,
    #: as information"
    reference_note = variable(str, value="", loggable=True)
    num_tasks = 2
    time_limit = "10m"
    tags = {"gpucomm"}
    maintainers = [contact()]

    # ------------------------------------------------------------------ the stages

    @run_after("init")
    def init_check(self):
        self.needs = self.requirements()
        self.valid_systems, self.valid_prog_environs = selection(self.needs[0])
        self.descr = self.description()
        self.tags |= self.more_tags()
        self.keep_files = [RESULTS_FILE]
        warn_unselected(self)

    @run_after("setup")
    def setup_check(self):
        self.check_variables()
        self.set_tasks()
        error = self.environment_error()
        if error:
            raise ReframeError(error)
        reason = self.skip_reason()
        self.skip_if(reason is not None, reason or "")
        self.request_gpus()
        self.executable, self.executable_opts = self.command()
        self.descr += f" ({self.ranks_text()})"
        self.set_references()
        self.note_missing_reference()

    @sanity_function
    def validate(self):
        return self.sanity_ok()

    @run_before("performance")
    def set_perf_variables(self):
        self.perf_variables = self.perf_functions()

    # ------------------------------------------------------------------ init steps

    def requirements(self):
        """(partition feature specs, environment feature specs) of the method
        (constants.METHOD_REQUIREMENTS): the partition's select, the environment's are checked
        at setup (a SKIP naming what is missing)."""
        systems, environs = METHOD_REQUIREMENTS[self.method]
        return list(systems), list(environs)

    def description(self):
        """What the check runs; setup adds the ranks (ranks_text), known once the partition is."""
        return f"{self.op} with {self.method}"

    def ranks_text(self):
        """'2 ranks', '4 ranks: 2 nodes x 2' (', emulated on one node'): the job's layout."""
        if self.num_nodes <= 1:
            return f"{self.num_tasks} ranks"
        text = f"{self.num_tasks} ranks: {self.num_nodes} nodes x {self.num_tasks // self.num_nodes}"
        return text + (", emulated on one node" if self.emulated else "")

    def more_tags(self):
        return {self.op, self.method}

    def paper_family(self):
        """The key of extras['paper_service_levels']: the collectives' multi-node references are
        the paper's scaling runs (Figs. 9/10), as the scaling checks'."""
        return "scaling" if self.op in COLLECTIVES else "default"

    # ------------------------------------------------------------------ setup steps

    @property
    def gpu_method(self):
        return self.method != HOST

    def gpus_per_node(self):
        return gpus_per_node(self.current_partition)

    def check_variables(self):
        """Every variable a user can set with -S, checked once with a one-line reason; a -S
        name no check has is a failure (setvars.check_names)."""
        setvars.check_names()
        hooked = hook_error(self.run_methods(), self.op, self.missing_reference)
        if hooked:
            raise ReframeError(hooked)
        if self.placement not in (ANY_PLACEMENT,) + PLACEMENTS:
            raise ReframeError(f"-S placement={self.placement}: choose any, {', '.join(PLACEMENTS)}")
        try:
            parse_sizes(self.sizes)
        except GpucommError as exc:
            raise ReframeError(f"-S sizes={self.sizes}: {exc}") from None
        for option in PAYLOAD_OPTIONS:  # each option's range or choices, from its row
            why = option.variable and option.problem(getattr(self, option.variable))
            if why:
                raise ReframeError(f"-S {option.variable}={getattr(self, option.variable)}: {why}")
        for name, low in (("ranks_per_node", 0), ("num_nodes", 1)):
            if not getattr(self, name) >= low:  # NaN fails too
                raise ReframeError(f"-S {name}={getattr(self, name)}: must be >= {low}")
        try:
            soaked = soak_sizes(self.validate_sizes, self.sizes)
        except GpucommError as exc:
            raise ReframeError(f"-S validate_sizes={self.validate_sizes}: {exc}") from None
        if self.validate_every > 0 and not soaked and not self.soak_where_swept:
            raise ReframeError(f"-S validate_sizes={self.validate_sizes}: this check sweeps none of them "
                               f"(sizes={self.sizes}): the soak asked for would check nothing")
        self.check_service_level()
        self.check_account()

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

    def environment_error(self):
        """Why nothing at all can run in this environment (no MPI), or None: a failure."""
        return missing_mpi(self.current_environ, self.needs[1])

    def skip_reason(self):
        """Why this check cannot run in this partition/environment, or None."""
        if not self.all_gpus and self.ranks_per_node == 0 and self.num_nodes > 2:
            return f"{self.op} is one pair of ranks: 1 or 2 nodes, not {self.num_nodes}"
        return self.node_count_reason() or unavailable(
            self.method, self.op, self.current_partition, self.current_environ,
            self.num_tasks_per_node, self.multi_node, self.needs)

    def request_gpus(self):
        # becomes the partition's '_rfm_gpu' resource (e.g. --gpus-per-node) under Slurm
        if self.gpu_method:
            self.num_gpus_per_node = self.num_tasks_per_node

    def recipe(self):
        """The site's recipe for the payload's venv (docs/sites/<site>.md), or ''."""
        return self.current_environ.extras.get(Extras.RECIPE, "")

    def interpreter(self):
        """The payload's interpreter: mixins.site_interpreter."""
        return site_interpreter(self, self.recipe() or "docs/sites/", "payload interpreter")

    def preflight_cmds(self, methods):
        """The job script's preflight line for ``methods`` ([] with -S preflight=n): the
        interpreter itself, once, on the job's first node, before the launcher (no MPI_Init:
        see site/preflight.py); a failure ends the job with its one-line reason."""
        if not self.preflight:
            return []
        cmd = [self.interpreter(), "-m", "gpucomm", "preflight", "--method", ",".join(methods)]
        if self.recipe():
            cmd += ["--recipe", self.recipe()]
        extras = self.current_environ.extras
        plugin = extras.get(Extras.CCL_PLUGIN_MODULE)
        if plugin and CCL in methods:
            cmd += ["--plugin", plugin]
        library = (extras.get(Extras.CCL_NET_CHECK) or {}).get("library")
        if library and CCL in methods:  # the plugin must load before the payload starts
            cmd += ["--net-plugin", library]
        if extras.get(Extras.MPI_CUDA) and GPU_AWARE_MPI in methods:  # Open MPI's own CUDA support
            cmd += ["--mpi-cuda"]
        return [" ".join(cmd) + " || exit $?"]

    def command(self):
        """(executable, options): the payload's command line."""
        opts = ["-m", "gpucomm", self.op, "--method", self.method, "--sizes", setvars.quoted(self.sizes),
                "--json", RESULTS_FILE]
        for option in PAYLOAD_OPTIONS:
            if option.variable:
                opts += option.command_line(getattr(self, option.variable), self.op)
        opts += soak_options(self.validate_every, self.validate_sizes, self.sizes)
        # the payload's watchdog ends a hang before the scheduler does, saying where; without a
        # time limit, at the ceiling
        limit_s = float(self.time_limit or 0)
        timeout_s = max(30.0, 0.9 * limit_s - 15) if limit_s > 0 else PAYLOAD_TIMEOUT_CEILING_S
        opts += ["--timeout", f"{timeout_s:g}"]
        if self.emulated:
            opts += ["--ranks-per-node", str(self.ranks_per_emulated_node)]
        limit = self.bandwidth_limit()
        if limit and self.gpu_method:
            opts += ["--max-bandwidth", f"{limit:g}"]
        if self.fits_memory and not self.sizes_given():
            opts.append("--fit-memory")
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
        return list(self.placement_options() or []) + self.qos_options()

    def set_references(self):
        """External references (ReFrame 4.10 '$ref'): <reference dir>/<system>.yaml, indexed by
        partition and method.  The directory is RFM_REFERENCE_PREFIX if set, else
        GPUCOMM_REFERENCE_DIR, else the repository's config/references/ (references_dir: the
        nearest above the check's file, so checks in a subdirectory of checks/ find it too).
        The paper's measurements (the checks the file lists under constants.PAPER_REFERENCES)
        judge only with the paper's settings (-S paper_tuning=y, the paper mode): elsewhere
        their values are shown beside the measurement without bounds (information_only), since
        the paper measured with its own tuned stacks."""
        path = self.reference_file()
        if not path:
            return
        if self.references_judge(path):
            self.reference = {"$ref": path}
        else:
            self.reference = information_only(read_references(path).get(type(self).__name__) or {})

    def references_judge(self, path):
        """Whether the references of ``path`` judge this run (see set_references); with no
        system file (None), nothing in it is the paper's: a check's own references judge."""
        paper = (read_references(path).get(PAPER_REFERENCES) or []) if path else []
        return self.paper_tuning or type(self).__name__ not in paper

    def reference_index(self):
        """Index values of this check in the reference YAML ('$partition' and variables)."""
        return {"$partition": self.current_partition.fullname}

    def missing_reference(self):
        """'' if the reference YAML has an entry for this check here, else what is missing."""
        path = self.reference_file()
        where = self.current_partition.fullname
        if not path:
            return f"no reference file for {self.current_system.name}"
        node = read_references(path).get(type(self).__name__)
        if not node:
            return f"no reference for {type(self).__name__} on {where} yet"
        for key in node.get("$index", ["$partition"]):
            value = self.reference_index().get(key, getattr(self, key, None))
            if not isinstance(node, dict) or value not in node:
                label = where if key == "$partition" else f"{key}={value}"
                return f"no reference for {label} on {where} yet"
            node = node[value]
        return ""

    def note_missing_reference(self):
        """Say in the description, and in the perflog (``reference_note``), when the check has
        no reference here (a pass then checks the run only, not its numbers: the bring-up
        procedure of docs/sites/*.md makes one), or when its references are the paper's, shown
        as information outside the paper mode."""
        recipe = self.recipe()
        self.reference_note = self.missing_reference()
        if self.reference_note:
            self.descr += f" [{self.reference_note}" + (f": bring-up in {recipe}]" if recipe else "]")
        elif not self.references_judge(self.reference_file()):
            self.reference_note = ("the paper's figures, as information: they judge only in the "
                                   "paper mode (--mode paper)")
            self.descr += f" [{self.reference_note}]"

    def reference_file(self):
        """The system's reference YAML (see set_references), or None."""
        import reframe.core.runtime as rt
        dirs = [rt.runtime().get_option("general/0/reference_prefix"),
                os.environ.get("GPUCOMM_REFERENCE_DIR"),
                references_dir(self.prefix)]
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

    def sizes_given(self):
        """Whether ReFrame's command line chose this check's sizes (-S sizes=..., -S
        CHECK.sizes=...): they must fit; the check's own sizes, or a mode's, are a default sweep."""
        return any(var == "sizes" and test in (None, type(self).__name__)
                   for test, var in setvars.command_line_names())

    def measured_sizes(self, method=None):
        """size_list up to the largest size the payload's memory allowed (a default sweep it
        stopped: contract.CAPPED_AT, of ``method``'s records, any method's where None); every
        size before the run."""
        cap = memory_cap(str(self.stdout), method)
        return [s for s in self.size_list if cap is None or s <= cap]

    def results_path(self):
        return os.path.join(self.stagedir, RESULTS_FILE)

    def sanity_ok(self):
        return sn.all(self.sanity_steps([payload_ok(str(self.stdout), str(self.stderr), self.measured_sizes())]))

    def sanity_steps(self, run_ok):
        """Deferred checks in order: the preflight (its reason, not "no GPUCOMM-DONE line"),
        ``run_ok`` (the payload's), the network plugin proof for ccl, the placement."""
        steps = []
        if self.preflight:
            steps.append(preflight_ok(str(self.stdout), str(self.stderr), self.recipe()))
        steps += run_ok
        net = self.current_environ.extras.get(Extras.CCL_NET_CHECK)
        if net and CCL in self.run_methods():
            steps.append(ccl_net_ok(NCCL_DEBUG_GLOB, net.get("pattern"), net.get("fallback_pattern"),
                                    self.current_environ.extras.get(Extras.CCL_PLUGIN_MODULE, "")))
        if self.checks_placement():
            steps.append(self.placement_proof(self.results_path()))
        return steps

    def perf_functions(self):
        swept = set(self.measured_sizes())
        copies = copied_points(self.op, self.num_tasks, self.perf_points)
        return {name: sn.make_performance_function(point_value(str(self.stdout), size, key), unit)
                for name, (size, key, unit) in self.perf_points.items() if size in swept and name not in copies}

    def precision_records(self):
        """Each perf point's record (perf_functions reads the same: point_value)."""
        records = records_of(os.path.join(self.stagedir, str(self.stdout)))
        return {name: (records[size], key, unit) for name, (size, key, unit) in self.perf_points.items()
                if size in records}
