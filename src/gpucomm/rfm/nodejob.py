"""NodeAcceptanceBase: every check of one node in one job (``--mode acceptance-node``).

Acceptance of a batch with ``--distribute`` makes one job per check and node (61 checks x 1,024
nodes x 5 repeats on Alps: 312,320 test cases); this check makes one per node and repeat.  Its job
script runs, in turn, every check of one node that ``--mode acceptance`` selects on the partition
(the inner checks: tagged gpucomm, not sweep or noise, one node or emulated nodes, valid for the
partition and environment; ``-S NodeAcceptanceCheck.checks=REGEX`` narrows them by name), each with
its own command lines: the inner check is set up once per partition and environment in this ReFrame
process (a *template*: its own setup and pre-run hooks, so the same payload launch, soak, preflight,
variables and node-state reader as its own job), and its job-script body becomes one block of this
job, in its own folder ``inner/<k>/`` (its output files ``rfm_job.out``/``rfm_job.err`` there), in
a subshell (one inner check's variables or ``exit`` never reach the next), followed by one line
``NODE_CHECK_TAG k rc`` in ``NODE_STATUS_FILE``.  A launcher of Slurm (srun) gets the inner job's
own task layout (``--ntasks``, ``--ntasks-per-node``, its GPUs) as step options.

After the run, each inner check is judged by its own sanity and perf functions, evaluated in its
folder (``inner_result``): its perf variables are reported as ``<inner name>:<variable>``
(contract.NODE_CHECK_SEP), their precision records under the same names (``precision``,
contract.PRECISION_FIELD, as rfm.precision reports a check's own), its status in
``node_checks`` ({inner name: "pass" | "fail: REASON" | "skip: REASON" | "no result: REASON"},
contract.NODE_CHECKS_FIELD, in the session report).  A
check that failed inside the job leaves the others reporting; an inner check without its status
line (the node died, the job's time limit) is "no result", and so are those after it.  The job
fails (after its perf variables are reported; in its sanity where --skip-performance-check leaves
the performance stage out) where an inner check failed or has no result, naming them; ``gpucomm
acceptance`` unfolds the job into its inner checks (analysis.inputs).

The job's time limit: the inner checks' own, added up (every one at its limit), unless ``-S
NodeAcceptanceCheck.time_limit=...`` gives one; over the partition's longest job (extras['max_time'])
the session is refused before anything is submitted (rfm.plan).  A job that reaches its limit leaves
the checks it did not reach "no result" (drained): a shorter limit is a bet on the checks' real times.
"""

import os
import re
import shutil
import sys

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.backends import getlauncher
from reframe.core.builtins import run_after, run_before, sanity_function, variable
from reframe.core.exceptions import ReframeError, SanityError, SkipTestError
from reframe.utility import osext

from ..contract import (
    NODE_CHECK_SEP,
    NODE_CHECK_TAG,
    NODE_STATUS_FILE,
    PRECISION_FIELD,
    STATUS_FAIL,
    STATUS_NO_RESULT,
    STATUS_PASS,
    STATUS_SKIP,
)
from . import plan
from .availability import selection
from .mixins import require_account, site_job_options
from .plan import parse_time
from .runlock import RunLock
from .scope import DistributeScope

#: the tags of the checks --mode acceptance selects per node (config/modes.py), and those it leaves out
INNER_TAG = "gpucomm"
LEFT_OUT_TAGS = frozenset({"sweep", "noise"})
#: (partition, environ, checks regex) -> [Inner]: the templates of this ReFrame process
_TEMPLATES: dict[tuple, list] = {}


class Inner:
    """One inner check of the node job: its name (the report's, e.g. "PingPongCheck %method=host"),
    its template test (None where it skipped at setup: ``skip`` says why) and its job-script block."""

    def __init__(self, name, test=None, skip="", lines=(), time_s=0.0):
        self.name, self.test, self.skip, self.lines, self.time_s = name, test, skip, list(lines), time_s


def registered_classes():
    """The test classes of the check files ReFrame loaded (their modules' test registries)."""
    seen = []
    for mod in list(sys.modules.values()):
        reg = getattr(mod, "_rfm_test_registry", None)
        for cls in (reg or ()):
            if cls not in seen:
                seen.append(cls)
    return seen


def filter_name(display_name):
    """A display name as ReFrame's -n matches it ("PingPongCheck %method=host" ->
    "PingPongCheck%method=host")."""
    return display_name.replace(" ", "")


def is_inner(test, partition, environ, pattern):
    """Whether ``test`` (an instance) is a check --mode acceptance runs on one node of
    ``partition`` in ``environ`` (and ``pattern`` names, where given)."""
    from reframe.core.runtime import valid_sysenv_comb
    if isinstance(test, NodeAcceptanceBase) or INNER_TAG not in test.tags or test.tags & LEFT_OUT_TAGS:
        return False
    if not (getattr(test, "num_nodes", 1) == 1 or getattr(test, "emulate_nodes", False)):
        return False
    if pattern and not re.search(pattern, filter_name(test.display_name)):
        return False
    combos = valid_sysenv_comb(test.valid_systems, test.valid_prog_environs)
    return any(p.fullname == partition.fullname and environ.name in [e.name for e in envs]
               for p, envs in combos.items())


def run_hooks(test, phase):
    """Run ``test``'s pipeline hooks of ``phase`` ('pre_run', 'pre_performance'), in order."""
    for hook in type(test).pipeline_hooks().get(phase, []):
        if hook.__name__ not in getattr(test, "_disabled_hooks", []):
            getattr(test, hook.__name__)()


def step_options(test, partition):
    """The Slurm step options of ``test``'s own job layout (its tasks and GPUs), for its launch
    inside the node job's allocation; [] for other launchers (mpirun takes -np itself)."""
    if test.job.launcher.registered_name != "srun":
        return []
    opts = [f"--ntasks={test.num_tasks}"]
    if test.num_tasks_per_node:
        opts.append(f"--ntasks-per-node={test.num_tasks_per_node}")
    if test.num_gpus_per_node:
        opts += partition.get_resource("_rfm_gpu", num_gpus_per_node=test.num_gpus_per_node)
    return opts


def inner_block(test, partition, k):
    """The job-script lines of inner check ``k``: in its folder, a subshell of its variables, its
    pre-run lines, its launch and its post-run lines, its output in its own files; then its status line."""
    job = test.job
    for attr in ("num_tasks", "num_tasks_per_node", "num_cpus_per_task"):
        setattr(job, attr, getattr(test, attr))
    own = list(job.launcher.options)
    job.launcher.options = step_options(test, partition) + own  # before the bind wrapper, which runs the rest
    try:
        launch = " ".join([job.launcher.run_command(job), test.executable, *test.executable_opts]).strip()
    finally:
        job.launcher.options = own
    body = [f"export {k_}={v}" for k_, v in test.env_vars.items()]  # as ReFrame writes them
    body += [*test.prerun_cmds, launch, *test.postrun_cmds]
    folder = f"inner/{k}"
    return [f"# {k}: {test.display_name}", f"mkdir -p {folder} && cd {folder} && (",
            *(f"  {ln}" for ln in body),
            f") >{test.stdout} 2>{test.stderr}",
            f'echo "{NODE_CHECK_TAG} {k} $?" >> "$GPUCOMM_NODE_STAGE/{NODE_STATUS_FILE}"',
            'cd "$GPUCOMM_NODE_STAGE"']


def make_inner(cls, variant, partition, environ, pattern, k):
    """The Inner of variant ``variant`` of ``cls`` on ``partition``/``environ``, or None where it
    is no inner check there."""
    try:
        test = cls(variant_num=variant)
    except SkipTestError:
        return None
    if not is_inner(test, partition, environ, pattern):
        return None
    name = test.display_name
    try:
        test.setup(partition, environ)
        run_hooks(test, "pre_run")
    except SkipTestError as exc:
        return Inner(name, skip=str(exc))
    return Inner(name, test, lines=inner_block(test, partition, k),
                 time_s=parse_time(test.time_limit) or 600.0)


def templates(partition, environ, pattern=""):
    """[Inner] of ``partition``/``environ`` (set up once per ReFrame process)."""
    key = (partition.fullname, environ.name, pattern)
    if key not in _TEMPLATES:
        out: list[Inner] = []
        for cls in registered_classes():
            if issubclass(cls, NodeAcceptanceBase):
                continue
            for variant in range(cls.num_variants):
                inner = make_inner(cls, variant, partition, environ, pattern, len(out))
                if inner is not None:
                    out.append(inner)
        _TEMPLATES[key] = out
    return _TEMPLATES[key]


def statuses(path):
    """{k: exit status} of the node job's status file (empty where it is absent)."""
    out = {}
    try:
        with open(path) as fp:
            for line in fp:
                words = line.split()
                if len(words) == 3 and words[0] == NODE_CHECK_TAG:
                    out[int(words[1])] = int(words[2])
    except (OSError, ValueError):
        pass
    return out


def first_line(exc):
    """The first line of an exception's message."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def inner_precision(test):
    """{variable: precision} of an inner check's run, its own record (rfm.precision's
    ``record_precision``, evaluated where its output is); {} where it keeps none."""
    record = getattr(test, "record_precision", None)
    if record is None:
        return {}
    try:
        record()
    except Exception:  # a damaged record: precision unknown, as rfm.precision says it
        return {}
    return dict(getattr(test, PRECISION_FIELD, None) or {})


def inner_result(test, folder):
    """(status, {variable: (value, unit)}, {variable: precision}) of one inner check run in
    ``folder``: its own sanity, then its own perf functions and precision record, evaluated there
    (its template pointed at the folder meanwhile)."""
    saved = test._stagedir
    test._stagedir = folder
    try:
        with osext.change_dir(folder):
            try:
                if not sn.evaluate(test._rfm_sanity()):
                    return f"{STATUS_FAIL}: sanity", {}, {}
            except Exception as exc:  # a sanity error, or the check's own reason
                return f"{STATUS_FAIL}: {first_line(exc)}", {}, {}
            try:
                run_hooks(test, "pre_performance")
                values = {name: (sn.evaluate(fn), getattr(fn, "unit", ""))
                          for name, fn in (test.perf_variables or {}).items()}
            except Exception as exc:
                return f"{STATUS_FAIL}: performance: {first_line(exc)}", {}, {}
            return STATUS_PASS, values, inner_precision(test)
    finally:
        test._stagedir = saved


#: ReFrame's option that leaves out the performance stage (and its hooks): it has no setting or
#: environment variable, so the node job reads it from the command line (performance_skipped)
SKIP_PERFORMANCE_OPTION = "--skip-performance-check"


def performance_skipped(argv=None):
    """Whether this ReFrame process leaves out the performance stage (--skip-performance-check)."""
    return SKIP_PERFORMANCE_OPTION in (sys.argv if argv is None else argv)


def inner_failures(node_checks):
    """The reason the node job fails, from its inner checks' statuses; '' where none failed."""
    bad = {n: s for n, s in node_checks.items() if not s.startswith((STATUS_PASS, STATUS_SKIP))}
    if not bad:
        return ""
    said = "; ".join(f"{n}: {s}" for n, s in list(bad.items())[:3])
    return (f"{len(bad)} of {len(node_checks)} inner checks failed or gave no result "
            f"({said}{'; ...' if len(bad) > 3 else ''})")


@sn.deferrable
def judged(test):
    """The node job's sanity, evaluated after its run (never in a dry run): the job ran its first
    inner check; where the performance stage is left out (--skip-performance-check), its inner
    checks' failures fail it here, as the performance hook would (no values are reported then)."""
    ran = test.judge_inner_checks()
    if ran and performance_skipped():
        reason = inner_failures(test.node_checks)
        if reason:
            raise SanityError(reason)
    return ran


class NodeAcceptanceBase(rfm.RunOnlyRegressionTest, RunLock, DistributeScope):
    """Every check of one node, in one job (the module's docstring)."""

    #: whether the node job exists at all: only --mode acceptance-node sets it (else it selects
    #: no partition: a plain run, or another mode, runs the checks themselves)
    node_job = variable(typ.Bool, value=False)
    #: the inner checks by name (a regular expression on the name as -n reads it, e.g.
    #: '^(PingPongCheck|AllReduceCheck)%method=host$'); '': every check of the node
    checks = variable(str, value="")
    #: {inner check: status} after the run (contract.NODE_CHECKS_FIELD), in the session report
    node_checks = variable(dict, value={}, loggable=True)
    #: {"<inner check>:<variable>": its precision} (contract.PRECISION_FIELD): the inner checks' own
    #: precision records (rfm.precision), as a check of its own reports them
    precision = variable(dict, value={}, loggable=True)
    #: the inner checks' names in run order (set at setup)
    inner_names = variable(list, value=[], loggable=True)
    #: the job's time limit: None, the inner checks' own added up
    time_limit = None
    #: rfm.scope's plan waits for this check's own set-up (its time limit is decided there)
    plans_at_setup = True
    num_tasks = 1
    exclusive_access = True
    tags = {"acceptance-node"}

    @run_after("init")
    def init_node_job(self):
        self.valid_systems, self.valid_prog_environs = selection(["*"]) if self.node_job else ([], [])
        self.descr = "every check of one node, in one job (acceptance)"

    @run_after("setup")
    def setup_node_job(self):
        inners = templates(self.current_partition, self.current_environ, self.checks)
        runs = [i for i in inners if i.test is not None]
        self.skip_if(not runs, "no check of one node runs here" + (f" (-S checks={self.checks})" if self.checks
                                                                   else ""))
        self.inners = inners
        self.inner_names = [i.name for i in inners]
        self.num_tasks = self.num_tasks_per_node = max(i.test.num_tasks for i in runs)
        gpus = max((i.test.num_gpus_per_node or 0) for i in runs)
        self.num_gpus_per_node = gpus or None
        if self.time_limit is None:  # the worst case: every inner check at its own limit
            self.time_limit = f"{int(sum(i.time_s for i in runs))}s"
        for i in runs:  # the inner checks' own files (e.g. the node class's expected values)
            self.copy_template_files(i)
        self.executable = "true"
        plan.plan_before_submitting(self, type(self).__name__)
        self.descr += f" ({len(runs)} checks, {len(inners) - len(runs)} skipped)"

    def copy_template_files(self, inner):
        k = self.inners.index(inner)
        src, dest = inner.test.stagedir, os.path.join(self.stagedir, "inner", str(k))
        os.makedirs(dest, exist_ok=True)
        for name in os.listdir(src):
            if os.path.isfile(os.path.join(src, name)) and not name.startswith("rfm_"):
                shutil.copy2(os.path.join(src, name), dest)

    @run_before("run")
    def write_inner_blocks(self):
        self.job.launcher = getlauncher("local")()  # the job script itself runs the inner launches
        require_account(self)
        self.job.options += site_job_options(self)
        lines = ['GPUCOMM_NODE_STAGE="$PWD"', f': > "{NODE_STATUS_FILE}"']
        for inner in self.inners:
            lines += inner.lines if inner.test is not None else [f"# skipped: {inner.name}: {inner.skip}"]
        self.prerun_cmds = lines + list(self.prerun_cmds or [])  # type: ignore[has-type]

    @sanity_function
    def validate(self):
        return judged(self)

    def judge_inner_checks(self):
        """Each inner check's status and values (``node_checks``, ``inner_values``); True where the
        job ran its first inner check at all (else its sanity fails: nothing of it ran)."""
        done = statuses(os.path.join(self.stagedir, NODE_STATUS_FILE))
        status, self.inner_values, precs, ended = {}, {}, {}, None
        for k, inner in enumerate(self.inners):
            if inner.test is None:
                status[inner.name] = f"{STATUS_SKIP}: {inner.skip}"
            elif k not in done:
                ended = ended or inner.name
                status[inner.name] = (f"{STATUS_NO_RESULT}: the node job ended before it (at {ended}: the node "
                                      "died or the job's time limit)")
            else:
                status[inner.name], values, prec = inner_result(inner.test,
                                                                os.path.join(self.stagedir, "inner", str(k)))
                self.inner_values.update({f"{inner.name}{NODE_CHECK_SEP}{v}": val for v, val in values.items()})
                precs.update({f"{inner.name}{NODE_CHECK_SEP}{v}": p for v, p in prec.items()})
        self.node_checks, self.precision = status, precs
        return bool(done)

    @run_before("performance")
    def set_inner_perf_variables(self):
        self.perf_variables = {name: sn.make_performance_function(sn.defer(value), unit)
                               for name, (value, unit) in getattr(self, "inner_values", {}).items()}

    @run_after("performance")
    def fail_for_inner_checks(self):
        reason = inner_failures(self.node_checks)
        if reason:
            raise ReframeError(f"{reason}; the others' values are reported")

