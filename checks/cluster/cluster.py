"""The inter-node checks with host buffers on CPU nodes, for the `ci` system's 4-node cluster
(.ci/cluster-up.sh; partition ci:cluster).  Kept out of checks/ itself (load with
``-c checks/cluster/``) because they only make sense where the nodes are real Slurm nodes:

* HostAllToAllScalingCheck, HostAllReduceScalingCheck: checks/internode.py's scaling checks
  (same node counts, sizes and perf variables) with method ``host``, whose MPI has no GPU;
* NodePairMatrixCheck: checks/pairmatrix.py's pair matrix with one rank per node over
  ``num_nodes`` nodes (default 4), so that every pair is a pair of nodes and a slow network path
  fails as its pair (``uni_<size>_i-j``: ranks i, j = the i-th and j-th node of the job, whose
  names the job's gpucomm_results.json lists in meta.hosts and the check prints).  References
  per pair class (extras['pair_classes'], e.g. same-switch / different-switch) in
  config/references/<system>.yaml under NodePairMatrixCheck.
"""

import json
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, run_before
from reframe.utility import import_module_from_file

from gpucomm.rfm import RESULTS_FILE, GpucommCheck

_HERE = os.path.dirname(os.path.abspath(__file__))
_REFERENCES = os.path.join(_HERE, os.pardir, os.pardir, "config", "references")
_internode = import_module_from_file(os.path.join(_HERE, os.pardir, "internode.py"))
_pairmatrix = import_module_from_file(os.path.join(_HERE, os.pardir, "pairmatrix.py"))


def _reference_file(self):
    """GpucommCheck.reference_file, whose default directory is config/references/ next to the
    check's own directory (checks/): from checks/cluster/ that is one level further up."""
    found = GpucommCheck.reference_file(self)
    if found:
        return found
    path = os.path.abspath(os.path.join(_REFERENCES, f"{self.current_system.name}.yaml"))
    return path if os.path.exists(path) else None


@rfm.simple_test
class HostAllToAllScalingCheck(_internode.AllToAllScalingCheck):
    method = parameter(["host"])
    reference_file = _reference_file


@rfm.simple_test
class HostAllReduceScalingCheck(_internode.AllReduceScalingCheck):
    method = parameter(["host"])
    reference_file = _reference_file


@rfm.simple_test
class NodePairMatrixCheck(_pairmatrix.PairMatrixCheck):
    method = parameter(["host"])
    num_nodes = 4
    ranks_per_node = 1
    reference_file = _reference_file

    def skip_reason(self):
        # the pair matrix's own rule (one node) does not apply: the pairs are nodes here
        return GpucommCheck.skip_reason(self)

    @run_after("setup")
    def check_pair_variables(self):
        if self.num_nodes < 2 or self.ranks_per_node != 1:
            from reframe.core.exceptions import ReframeError
            raise ReframeError("NodePairMatrixCheck is one rank on each of >= 2 nodes "
                               "(-S num_nodes=N, ranks_per_node=1)")
        self.perf_size_list()

    def node_names(self):
        """The job's node names by rank (its results' meta.hosts), or []."""
        try:
            with open(os.path.join(self.stagedir, RESULTS_FILE)) as fp:
                return json.load(fp)["meta"]["hosts"]
        except (OSError, ValueError, KeyError):
            return []

    @run_before("performance")
    def name_the_nodes(self):
        hosts = self.node_names()
        if hosts:
            self.descr += " on " + ", ".join(f"{r}={h}" for r, h in enumerate(hosts))
            print(f"{self.unique_name}: ranks -> nodes: "
                  + ", ".join(f"{r}={h}" for r, h in enumerate(hosts)))
