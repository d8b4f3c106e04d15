"""Small ReFrame plugins, one concern each (as cscs-reframe-tests' checks/mixins/): the base
check and the native checks are built from them.

* ``SiteOptions``: the partition's and environment's launcher options, scheduler options and
  environment variables, per method;
* ``MultiNode``: how many nodes, emulated or real, and where they sit on the network;
* ``runlock.RunLock``: one ReFrame run per stage directory (its own module);
* ``watch.WatchRun``: a local job's payload ends with the ReFrame run (its own module).
"""

import os
import sys

import reframe.utility.sanity as sn
from reframe.core.builtins import run_before, variable
from reframe.core.exceptions import JobSchedulerError, ReframeError, SpawnedProcessError
from reframe.core.logging import getlogger
from reframe.core.pipeline import RegressionTestPlugin
from reframe.utility import nodelist_expand

from ..constants import ACCOUNT_UNSET, ANY_PLACEMENT, CCL, PYTHON_PLACEHOLDER, PYTHON_UNSET, Extras
from ..site import placement
from ..site.siteconf import BIND_WRAPPER
from . import setvars
from .sanity import placement_ok, read_meta

#: the warnings already given in this ReFrame session (warn_once)
_WARNED = set()


def warn_once(message):
    """One WARNING line per session for ``message``, however many checks meet it (a dry run
    of a site without GPUCOMM_PYTHON: one line, not one per job script)."""
    if message not in _WARNED:
        _WARNED.add(message)
        getlogger().warning(message)


def require_account(test):
    """Where the site requires a Slurm account and none was given (the partition's access
    holds constants.ACCOUNT_UNSET, site.siteconf.slurm_access): a run fails at setup saying so;
    a dry run writes the placeholder and says so once."""
    if not any(ACCOUNT_UNSET in str(o) for o in test.current_partition.access):
        return
    why = (f"no Slurm account for {test.current_system.name}, which requires one: set "
           "SBATCH_ACCOUNT=<project>")
    if not test.is_dry_run():
        raise ReframeError(why)
    warn_once(f"{why}; the job scripts say --account={ACCOUNT_UNSET}")


def site_job_options(test):
    """The partition's and the environment's own job options (extras['job_options'], e.g. Alps'
    --uenv): every job of the site gets them, the payload's and the node-state reader's."""
    return [o for extras in (test.current_partition.extras, test.current_environ.extras)
            for o in extras.get(Extras.JOB_OPTIONS, [])]


def site_interpreter(test, recipe, what):
    """-S python, else the environment's extras['python'], else ReFrame's own.  Where a site
    config marks it unset (constants.PYTHON_UNSET) a run fails at setup, and a dry run writes
    constants.PYTHON_PLACEHOLDER instead (saying so once), so that the job scripts can be read
    before the venv exists.  ``what``: the interpreter's job, for the reason."""
    python = test.python or test.current_environ.extras.get(Extras.PYTHON) or sys.executable
    if python != PYTHON_UNSET:
        return python
    why = (f"no {what} for {test.current_environ.name} on {test.current_system.name}: set "
           f"GPUCOMM_PYTHON to the venv built per {recipe} (or -S python=...)")
    if not test.is_dry_run():
        raise ReframeError(why)
    placeholder = PYTHON_PLACEHOLDER.format(recipe=recipe)
    warn_once(f"{why}; the job scripts name {placeholder} instead")
    return placeholder


#: what a refused QOS means, added to sbatch's message where the check chose the QOS by the job's
#: size (MultiNode.qos_options): Slurm takes a QOS only where the account is associated with it
#: (sacctmgr(1): an association's QOS list), which sacctmgr shows
QOS_REFUSED = ("sbatch refused --qos={qos}, which this check asks for by its node count "
               "(extras['qos_by_nodes']): a QOS is taken only where your account is associated "
               "with it; see yours with `sacctmgr show assoc user=$USER format=qos`, or give one "
               "with SBATCH_QOS (the checklist of {recipe})")

#: where a method's NCCL/RCCL debug log goes (NCCL_DEBUG_FILE, per host and process, in the
#: stage directory): the network-plugin proof greps these, the payload's stdout stays clean
NCCL_DEBUG_FILE = "gpucomm_nccl_debug.%h.%p.log"
NCCL_DEBUG_GLOB = "gpucomm_nccl_debug.*.log"
#: what Slurm says of a multi-node job's switches (MultiNode.topology_cmds), in the stage directory
TOPOLOGY_FILE = "gpucomm_topology.txt"


def is_bind_wrapper(option):
    """Whether a launcher option is the per-task bind wrapper (config/bin/gpucomm-bind)."""
    return os.path.basename(option) == BIND_WRAPPER


def launcher_options(partition_extras, environ_extras, method):
    """The launcher options of ``method``: the partition's, then the environment's (each: the
    list for every launch, then the method's or 'default'), with the bind wrapper moved last:
    it runs the command that follows it, so an option after it (an environment's, e.g.
    --mpi=cray_shasta) would be taken for the command."""
    opts = []
    for extras in (partition_extras, environ_extras):
        opts += list(extras.get(Extras.LAUNCHER_OPTIONS, []))
        by_method = extras.get(Extras.METHOD_LAUNCHER_OPTIONS, {})
        opts += list(by_method.get(method, by_method.get("default", [])))
    return [o for o in opts if not is_bind_wrapper(o)] + [o for o in opts if is_bind_wrapper(o)]


def method_env(extras, method):
    """{VAR: value} of ``method`` in one ``extras`` (its entry, else 'default')."""
    by_method = extras.get(Extras.METHOD_ENV_VARS, {})
    return dict(by_method.get(method, by_method.get("default", {})))


def env_groups(envs):
    """[(methods, env)]: ``envs`` ({method: {VAR: value}}, in run order) grouped by equal
    environments (in order of first appearance).  One group = one launch, so each method runs
    with its own variables only: NCCL's and libfabric's (FI_CXI_*) for ccl, NVSHMEM's for
    nvshmem, never for the MPI methods, whose Cray MPICH reads FI_CXI_* too; each with its own
    GPU binding (the partition's, part of the environment: one GPU per task, ipc-copy every
    GPU of the node)."""
    groups = []
    for method, env in envs.items():
        for methods, same in groups:
            if same == env:
                methods.append(method)
                break
        else:
            groups.append(([method], dict(env)))
    return groups


class SiteOptions(RegressionTestPlugin):
    """Site knobs from the partition's and the environment's ``extras``, applied before the run:

    * ``launcher_options``: list, added to every launch (the bind wrapper always last);
    * ``method_launcher_options``: {method or 'default': list}, added for this method (e.g. no
      per-task GPU isolation for ipc-copy);
    * ``job_options``: list of extra scheduler options;
    * ``method_env_vars``: {method or 'default': {VAR: value}}: the partition's (the per-task
      binding) and the environment's, for every method the job runs (``run_methods()``);
      methods whose variables differ run in separate launches (``env_groups``; the health
      sweep);
    * ``ccl_net_check``: for ccl, its ``env`` and NCCL_DEBUG_FILE (the proof that NCCL/RCCL chose
      the network plugin, read by the sanity);
    * ``paper_method_env_vars`` (with ``-S paper_tuning=y``, the paper mode) and the InfiniBand
      service level (``-S service_level=N``, partition extras['service_level_vars']).

    Its contract with the host check (GpucommCheck), phase by phase:

    * init: nothing of its own.  By setup the host defines ``method`` (whose options apply);
      ``op`` (paper tuning limited to some operations: paper_method_env_vars' ``ops``) and
      ``multi_node`` (MultiNode's: paper service levels between nodes, paper tuning on one) are
      read where the host has them, else every operation and one node;
    * setup: the host calls ``check_service_level()`` with its own checks of the variables, so
      a bad -S service_level is a one-line error before a job is written; no hook here;
    * before the run (``apply_site_options``, once the host's setup has set the tasks and the
      command): adds ``scheduler_options()`` and the extras' job_options to ``job.options``,
      ``site_launcher_options()`` to the launcher's, the partition's variables of
      ``site_method()`` and the first launch group's to ``env_vars``, puts
      ``preflight_cmds()`` of that group before ``prerun_cmds``, and hands every group to
      ``more_launches()``;
    * sanity: nothing of its own (the host greps NCCL_DEBUG_GLOB for the ccl network proof).

    The host may override these steps; each default stands alone, one method in one launch:
    ``site_method()`` (``method``), ``run_methods()`` ([``method``]), ``paper_family()``
    ('default'), ``scheduler_options()`` ([]), ``site_launcher_options()`` (launcher_options),
    ``preflight_cmds(methods)`` ([]), ``more_launches(groups)`` (a second group is an error).
    """

    #: apply the paper's per-method tuning (extras['paper_method_env_vars'],
    #: extras['paper_service_levels'] between nodes); the paper mode sets it
    paper_tuning = variable(setvars.boolean("paper_tuning"), value=False)
    #: InfiniBand service level for NCCL and UCX (-1: the fabric's default); only where the
    #: partition names the variables (extras['service_level_vars'], Leonardo)
    service_level = variable(setvars.integer("service_level"), value=-1)

    def site_method(self):
        """The method whose partition options (binding, launcher options) apply."""
        return self.method

    def run_methods(self):
        """The methods this job runs (one; the health sweep: several)."""
        return [self.method]

    def paper_family(self):
        """The key of extras['paper_service_levels'] for this check."""
        return "default"

    def scheduler_options(self):
        """Extra scheduler options of the check itself (e.g. placement); [] by default."""
        return []

    def site_launcher_options(self):
        return launcher_options(self.current_partition.extras, self.current_environ.extras,
                                self.site_method())

    def check_account(self):
        """mixins.require_account."""
        require_account(self)

    def check_service_level(self):
        """A one-line error for -S service_level out of InfiniBand's 0-15 (-1: the fabric's
        default) or on a partition without one."""
        if not -1 <= self.service_level <= 15:
            raise ReframeError(f"-S service_level={self.service_level}: an InfiniBand service level "
                               "is 0 to 15 (-1: the fabric's default)")
        if self.service_level >= 0 and not self.current_partition.extras.get(Extras.SERVICE_LEVEL_VARS):
            raise ReframeError(f"-S service_level={self.service_level}: partition "
                               f"{self.current_partition.fullname} has no InfiniBand service level "
                               "(extras['service_level_vars'])")

    def effective_service_level(self):
        """-S service_level, else (paper tuning, several nodes) the paper's for this check's
        family (extras['paper_service_levels']: {family: SL, or [[max nodes, SL], ...]
        ascending, the first whose bound is >= the job's nodes}), else None."""
        if self.service_level >= 0:
            return self.service_level
        levels = self.current_environ.extras.get(Extras.PAPER_SERVICE_LEVELS)
        if not (self.paper_tuning and levels and getattr(self, "multi_node", False)):
            return None
        level = levels.get(self.paper_family(), levels.get("default"))
        if isinstance(level, (list, tuple)):
            level = next((sl for bound, sl in level if self.num_nodes <= bound), None)
        return None if level is None else int(level)

    def env_of(self, method):
        """The variables of a launch of ``method``: the partition's method_env_vars entry (the
        per-task binding), the environment's, the ccl network proof, the paper's tuning where it
        applies, the service level."""
        extras = self.current_environ.extras
        env = method_env(self.current_partition.extras, method)
        env.update(method_env(extras, method))
        net = extras.get(Extras.CCL_NET_CHECK)
        if method == CCL and net:
            env.update({k: str(v) for k, v in net.get("env", {}).items()})
            env["NCCL_DEBUG_FILE"] = NCCL_DEBUG_FILE
        if self.paper_tuning:
            for entry in self.paper_entries(extras, method):
                env.update({k: str(v) for k, v in entry.get("env", {}).items()})
        level = self.effective_service_level()
        if level is not None:
            for var in self.current_partition.extras.get(Extras.SERVICE_LEVEL_VARS, []):
                env[var] = str(level)
        return env

    def paper_entries(self, extras, method):
        """The entries of extras['paper_method_env_vars'][method] that apply to this job: an
        entry (or a list of them) is {env, ops: the operations it is for (all if absent),
        single_node: only on one node (any node count if absent)}."""
        entries = extras.get(Extras.PAPER_METHOD_ENV_VARS, {}).get(method) or []
        entries = [entries] if isinstance(entries, dict) else list(entries)
        op, several = getattr(self, "op", None), getattr(self, "multi_node", False)
        return [e for e in entries if (not e.get("ops") or op in e["ops"])
                and not (e.get("single_node") and several)]

    def launch_groups(self):
        """[(methods, env)]: one launch each (env_groups over run_methods())."""
        return env_groups({m: self.env_of(m) for m in self.run_methods()})

    @run_before("run")
    def apply_site_options(self):
        self.job.options += self.scheduler_options() + site_job_options(self)
        self.job.launcher.options += self.site_launcher_options()
        groups = self.launch_groups()
        self.env_vars.update(groups[0][1])
        # the preflight, then (MultiNode) what Slurm says of the nodes' switches
        self.prerun_cmds = (self.preflight_cmds(groups[0][0]) + self.topology_cmds() +
                            list(self.prerun_cmds))
        self.more_launches(groups)

    def preflight_cmds(self, methods):
        """Job-script lines that check the interpreter before a launch of ``methods``."""
        return []

    def more_launches(self, groups):
        """Launch every group after the first (the health sweep); one group here."""
        if len(groups) > 1:
            raise ReframeError("methods " + " / ".join(",".join(m) for m, _ in groups) +
                               " need different environment variables: run them separately")


class MultiNode(RegressionTestPlugin):
    """Nodes of a job: how many, whether they are real or rank groups on one node, and where
    they sit on the network."""

    #: nodes to run on: ranks = num_nodes x ranks per node (a pair on 2 nodes: 1 rank each)
    num_nodes = variable(setvars.integer("num_nodes"), value=1)
    #: run the num_nodes "nodes" as groups of ranks on one real node (the payload's
    #: --ranks-per-node): the multi-node logic tested on one machine
    emulate_nodes = variable(setvars.boolean("emulate_nodes"), value=False)
    #: where the nodes of a multi-node job sit on the network: 'any', or one of
    #: constants.PLACEMENTS, requested through the partition's extras['placement_options'] and
    #: checked after the run where Slurm tells the topology (SLURM_TOPOLOGY_ADDR)
    placement = variable(str, value=ANY_PLACEMENT)
    #: explicit Slurm node list for a multi-node job (e.g. nid[001056,001058]); replaces the
    #: partition's placement option
    nodelist = variable(str, value="")
    #: which record proved the placement (set by the sanity: SLURM_TOPOLOGY_ADDR, or
    #: ``scontrol show topology`` and the switch that connects the nodes)
    placement_source = variable(str, value="", loggable=True)

    @property
    def emulated(self):
        """Whether the job's nodes are rank groups on one real node."""
        return self.emulate_nodes and self.num_nodes > 1

    @property
    def multi_node(self):
        """Whether the job spans several real nodes."""
        return self.num_nodes > 1 and not self.emulate_nodes

    def checks_placement(self):
        """Whether the run must prove its nodes' placement (several real nodes, one asked for)."""
        return self.multi_node and self.placement != ANY_PLACEMENT

    def topology_cmds(self):
        """The job-script line that records, where the placement is checked on Slurm, the
        switches that connect all the job's nodes as Slurm itself reports them
        (site.placement), for the sanity where the tasks got no SLURM_TOPOLOGY_ADDR."""
        if not self.checks_placement() or self.current_partition.scheduler.registered_name != "slurm":
            return []
        self.keep_files = list(self.keep_files) + [TOPOLOGY_FILE]
        return [f'{placement.SOURCE} "$SLURM_JOB_NODELIST" > {TOPOLOGY_FILE} 2>&1 || true']

    @sn.deferrable
    def placement_proof(self, results_path):
        """True if the nodes sit where ``placement`` asked (sanity.placement_ok): by the
        payload's record (SLURM_TOPOLOGY_ADDR), else by the job's ``scontrol show topology``;
        ``placement_source`` says which."""
        meta = read_meta(results_path).get("placement") or {}
        proof = None
        if meta.get("distance") == "unknown":
            try:
                with open(os.path.join(self.stagedir, TOPOLOGY_FILE)) as fp:
                    proof = placement.placement_of_switches(fp.read())
            except OSError:
                proof = ("unknown", f"{placement.SOURCE}: no {TOPOLOGY_FILE}")
        known = [src for dist, src in (proof or ("unknown", ""), (meta.get("distance"), meta.get("source")))
                 if dist not in (None, "unknown")]
        self.placement_source = known[0] if known else ""
        return sn.evaluate(placement_ok(results_path, self.placement,
                                        self.current_partition.extras.get(Extras.TOPOLOGY), proof))

    def placement_options(self):
        """Scheduler options that put the job's nodes where ``placement`` asks (None: the
        partition has no way to ask for it)."""
        if not self.multi_node:
            return []
        if self.nodelist:
            return [f"--nodelist={self.nodelist}"]
        if self.placement == ANY_PLACEMENT:
            return []
        return self.current_partition.extras.get(Extras.PLACEMENT_OPTIONS, {}).get(self.placement)

    @property
    def real_nodes(self):
        """Nodes the job asks the scheduler for."""
        return self.num_nodes if self.multi_node else 1

    def qos_options(self):
        """``--qos=`` by job size from the partition's extras['qos_by_nodes'] ([[max nodes,
        qos], ...], ascending: the first whose bound is >= the job's nodes), unless the
        partition's access already names a QOS (SBATCH_QOS, written by slurm_access, wins)."""
        part = self.current_partition
        table = part.extras.get(Extras.QOS_BY_NODES)
        if not table or any(str(o).startswith("--qos") for o in part.access):
            return []
        for bound, qos in table:
            if self.real_nodes <= bound:
                return [f"--qos={qos}"]
        return []

    @run_before("run")
    def explain_qos_refusal(self):
        """Where the job asks for a QOS by its size (qos_options) and sbatch refuses it with a
        message about the QOS, the failure also says how to see the QOS the account may use
        (QOS_REFUSED); any other failure is sbatch's alone."""
        chosen = self.qos_options()
        if not chosen or self.is_dry_run():
            return
        qos, submit = chosen[0].split("=", 1)[1], self.job.submit
        recipe = self.current_environ.extras.get(Extras.RECIPE) or "docs/sites/"

        def submit_or_explain():
            try:
                return submit()
            except (SpawnedProcessError, JobSchedulerError) as exc:
                if "qos" not in str(exc).lower():
                    raise
                raise JobSchedulerError(f"{exc}\n{QOS_REFUSED.format(qos=qos, recipe=recipe)}") from None

        self.job.submit = submit_or_explain

    def node_count_reason(self):
        """Why the partition cannot give num_nodes real nodes, or None."""
        part = self.current_partition
        nodes = part.extras.get(Extras.NODES)
        if self.multi_node and nodes is not None and self.num_nodes > nodes:
            return (f"{part.fullname} has {nodes} node(s), not {self.num_nodes}: -S emulate_nodes=y "
                    "runs the nodes as groups of ranks on one node")
        cap = part.extras.get(Extras.MAX_NODES)
        if cap is not None and self.real_nodes > cap:
            return (f"{part.fullname} takes at most {cap} nodes per job (extras['max_nodes']), "
                    f"not {self.real_nodes}")
        table = part.extras.get(Extras.QOS_BY_NODES)
        if table and self.real_nodes > table[-1][0] and not any(
                str(o).startswith("--qos") for o in part.access):
            return (f"{part.fullname}: no QOS for {self.real_nodes} nodes (extras['qos_by_nodes'] "
                    f"stops at {table[-1][0]}, {table[-1][1]})")
        if self.placement_options() is None:
            return (f"{part.fullname} has no scheduler option for placement {self.placement} "
                    "(extras['placement_options']): give the nodes with -S nodelist=...")
        given = len(nodelist_expand(self.nodelist)) if self.nodelist and self.multi_node else None
        if given is not None and given != self.real_nodes:
            # sbatch would take the list's nodes or refuse: never a job of other nodes than asked
            return (f"-S nodelist={self.nodelist} names {given} node(s), this job takes {self.real_nodes}: "
                    f"give the list to the checks of {given} nodes (-S {type(self).__name__}.nodelist=..., "
                    "docs/acceptance.md step 2)")
        return None
