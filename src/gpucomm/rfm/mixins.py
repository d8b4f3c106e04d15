"""Small ReFrame plugins, one concern each (as cscs-reframe-tests' checks/mixins/): the base
check and the native checks are built from them.

* ``SiteOptions``: the partition's and environment's launcher options, scheduler options and
  environment variables, per method;
* ``MultiNode``: how many nodes, emulated or real, and where they sit on the network.
"""

from reframe.core.builtins import run_before, variable
from reframe.core.pipeline import RegressionTestPlugin

from ..constants import ANY_PLACEMENT, Extras


class SiteOptions(RegressionTestPlugin):
    """Site knobs from the partition's and the environment's ``extras``, applied before the run:

    * ``launcher_options``: list, added to every launch;
    * ``method_launcher_options``: {method or 'default': list}, added for this method (e.g. no
      per-task GPU isolation for ipc-copy);
    * ``job_options``: list of extra scheduler options;
    * ``method_env_vars``: {method or 'default': {VAR: value}}.

    The method is ``site_method()`` (the check's method by default)."""

    def site_method(self):
        """The method whose site options apply."""
        return self.method

    def scheduler_options(self):
        """Extra scheduler options of the check itself (e.g. placement); [] by default."""
        return []

    @run_before("run")
    def apply_site_options(self):
        self.job.options += self.scheduler_options()
        key = self.site_method()
        for extras in (self.current_partition.extras, self.current_environ.extras):
            self.job.launcher.options += list(extras.get(Extras.LAUNCHER_OPTIONS, []))
            by_method = extras.get(Extras.METHOD_LAUNCHER_OPTIONS, {})
            self.job.launcher.options += list(by_method.get(key, by_method.get("default", [])))
            self.job.options += list(extras.get(Extras.JOB_OPTIONS, []))
            env_by_method = extras.get(Extras.METHOD_ENV_VARS, {})
            self.env_vars.update(env_by_method.get(key, env_by_method.get("default", {})))


class MultiNode(RegressionTestPlugin):
    """Nodes of a job: how many, whether they are real or rank groups on one node, and where
    they sit on the network."""

    #: nodes to run on: ranks = num_nodes x ranks per node (a pair on 2 nodes: 1 rank each)
    num_nodes = variable(int, value=1)
    #: run the num_nodes "nodes" as groups of ranks on one real node (the payload's
    #: --ranks-per-node): the multi-node logic tested on one machine
    emulate_nodes = variable(bool, value=False)
    #: where the nodes of a multi-node job sit on the network: 'any', or one of
    #: constants.PLACEMENTS, requested through the partition's extras['placement_options'] and
    #: checked after the run where Slurm tells the topology (SLURM_TOPOLOGY_ADDR)
    placement = variable(str, value=ANY_PLACEMENT)
    #: explicit Slurm node list for a multi-node job (e.g. nid[001056,001058]); replaces the
    #: partition's placement option
    nodelist = variable(str, value="")

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
        if self.placement == ANY_PLACEMENT:
            return []
        return self.current_partition.extras.get(Extras.PLACEMENT_OPTIONS, {}).get(self.placement)

    def node_count_reason(self):
        """Why the partition cannot give num_nodes real nodes, or None."""
        part = self.current_partition
        nodes = part.extras.get(Extras.NODES)
        if self.multi_node and nodes is not None and self.num_nodes > nodes:
            return (f"{part.fullname} has {nodes} node(s), not {self.num_nodes}: -S emulate_nodes=y "
                    "runs the nodes as groups of ranks on one node")
        if self.placement_options() is None:
            return (f"{part.fullname} has no scheduler option for placement {self.placement} "
                    "(extras['placement_options']): give the nodes with -S nodelist=...")
        return None
