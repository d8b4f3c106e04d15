"""Inter-node checks (the paper's Figs. 7-10): multi ping-pong between two nodes, with a
placement on the network, and the scaling of all-to-all and all-reduce over node counts.

* MultiPingPongCheck: rank i of node A ping-pongs with rank i of node B, all pairs at once
  (``pairs=all``: one rank per GPU/GCD, or 2 on a node without GPUs; ``pairs=single``: one pair);
  goodput is the per-node aggregate.  ``-S placement=same-switch|different-switch|
  different-group|any`` (default same-switch, Fig. 7's), ``-S nodelist=...`` for given nodes;
  the run fails if Slurm reports the nodes elsewhere.  Host buffers (method host) are the
  paper's "MPI (host mem. buffers)" baseline.
  Where the partition gives the paper's two-node layout (extras['multi_pingpong'], LUMI: 4
  ranks per node on GCDs 1,3,5,7, cores 57,25,9,41, for every method), ``pairs=all`` uses it
  instead of every GCD (``-S ranks_per_node=N`` still wins).
* AllToAllScalingCheck (2 MiB blocks, Fig. 9) and AllReduceScalingCheck (1 GiB, Fig. 10): ccl and
  gpu-aware-mpi on every GPU of 2, 4, ... nodes, up to ``-S max_nodes=N`` (8; 512 in the paper
  mode), and never above the partition's largest job (extras['max_nodes'], Leonardo 256: the
  larger counts are skipped saying so).  Time limit: ``base_time_s`` + ``time_per_node_s`` x
  nodes (10 min + 2 s per node: 17 min at 256 nodes), since start-up (interpreter, CUDA, NCCL
  communicator) grows with the job.

On one machine, ``-S emulate_nodes=y`` runs the nodes as groups of ranks (the payload's
--ranks-per-node), e.g. ``-S ranks_per_node=1`` for 2 ranks as 2 "nodes" x 1 GPU.
"""

import reframe as rfm
from reframe.core.builtins import parameter, run_after, run_before, variable
from reframe.core.exceptions import ReframeError

from gpucomm.constants import METHODS, Extras
from gpucomm.contract import SCALING_PERF_POINTS
from gpucomm.rfm import GpucommCheck

#: node counts of the scaling checks (the paper's Figs. 9/10: 2 to 512)
NODE_COUNTS = [2 ** i for i in range(1, 10)]


@rfm.simple_test
class MultiPingPongCheck(GpucommCheck):
    method = parameter(list(METHODS))
    pairs = parameter(["all", "single"])
    op = "multi-pingpong"
    num_nodes = 2
    placement = "same-switch"

    @run_after("init")
    def set_pairs(self):
        self.all_gpus = self.pairs == "all"

    def paper_family(self):
        return "two-node"

    def layout(self):
        """The partition's two-node layout for this method ({ranks, gcds, cpus}), or None:
        only for all pairs, on real nodes, unless -S ranks_per_node says otherwise."""
        table = self.current_partition.extras.get(Extras.MULTI_PINGPONG)
        if not table or self.pairs != "all" or not self.multi_node or self.ranks_per_node:
            return None
        ranks = table.get("ranks_per_node", {}).get(self.method)
        if not ranks:
            return None
        return {"ranks": ranks, "gcds": table["gcds"][:ranks], "cpus": table["cpus"][:ranks]}

    def set_tasks(self):
        super().set_tasks()
        layout = self.layout()
        if layout:
            self.num_tasks_per_node = layout["ranks"]
            self.num_tasks = layout["ranks"] * self.num_nodes

    def site_launcher_options(self):
        opts = super().site_launcher_options()
        layout = self.layout()
        if layout:  # the layout's cores replace the partition's per-GCD masks
            opts = [o for o in opts if not o.startswith("--cpu-bind=")]
            opts.insert(0, "--cpu-bind=map_cpu:" + ",".join(map(str, layout["cpus"])))
        return opts

    def request_gpus(self):
        super().request_gpus()
        if self.layout() and self.gpu_method:  # the layout's GCDs are numbered on the whole node
            self.num_gpus_per_node = self.gpus_per_node()

    @run_before("run")
    def set_layout_gpus(self):
        layout = self.layout()
        if layout:  # the layout's GCDs replace the partition's every-GCD table
            for var in [v for v in self.env_vars if v.startswith("GPUCOMM_BIND_") and
                        v.endswith("_VISIBLE_DEVICES")]:
                self.env_vars[var] = ",".join(map(str, layout["gcds"]))


class _ScalingCheck(GpucommCheck):
    method = parameter(["ccl", "gpu-aware-mpi"])
    nodes = parameter(NODE_COUNTS)
    #: the largest node count generated (the others are not)
    max_nodes = variable(int, value=8)
    #: the one size measured (replaces ``sizes``, which a mode may set for every check)
    size = variable(str)
    #: time limit: base_time_s + time_per_node_s x nodes (start-up grows with the job)
    base_time_s = variable(int, value=600)
    time_per_node_s = variable(int, value=2)
    all_gpus = True
    perf_points = SCALING_PERF_POINTS

    @run_after("init")
    def set_scale(self):
        # the counts above -S max_nodes are not generated; a max_nodes below the smallest count
        # keeps the smallest, whose setup fails naming the bad value (never a silent 0/0 run)
        self.skip_if(self.nodes > max(self.max_nodes, NODE_COUNTS[0]),
                     f"{self.nodes} nodes > max_nodes={self.max_nodes}")
        self.num_nodes = self.nodes
        self.sizes = self.size
        if self.base_time_s >= 0 and self.time_per_node_s >= 0:  # else setup fails, naming them
            self.time_limit = f"{self.base_time_s + self.time_per_node_s * self.nodes}s"

    def check_variables(self):
        super().check_variables()
        if self.max_nodes < NODE_COUNTS[0]:
            raise ReframeError(f"-S max_nodes={self.max_nodes}: must be >= {NODE_COUNTS[0]}, the "
                               "smallest node count of the scaling checks")
        for name in ("base_time_s", "time_per_node_s"):
            if getattr(self, name) < 0:
                raise ReframeError(f"-S {name}={getattr(self, name)}: must be >= 0")

    def paper_family(self):
        return "scaling"


@rfm.simple_test
class AllToAllScalingCheck(_ScalingCheck):
    op = "alltoall"
    size = "2M"


@rfm.simple_test
class AllReduceScalingCheck(_ScalingCheck):
    op = "allreduce"
    size = "1G"
