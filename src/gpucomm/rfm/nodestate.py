"""NodeStateBase: the hardware of a node before the numbers (checks/nodestate.py).

One job per node, one task, no launcher: the job script runs the reader
(``python -m gpucomm.site.nodestate``, site/nodestate.py) on the node, which reads every GPU
through the vendor's library and every NIC through sysfs and judges them against the node
class's expected values (config/nodeclasses.py, written into the stage directory as
contract.NODESTATE_EXPECTED_FILE).  Sanity: the reader's one record; a problem fails the check
with the reader's lines (each naming the GPU and the link).

* the partition's class: ``PARTITIONS`` of the classes file, or ``-S node_class=NAME``;
* a partition without a class, or a class without expected values: a SKIP saying what to add;
* an unknown class: a failure at setup, one line naming the known ones;
* the vendor's Python package not installed on the node: a SKIP naming it (the reader's
  ``skip``); a fault hook that cannot fire: a failure saying so.
"""

import json
import os
import runpy

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.backends import getlauncher
from reframe.core.builtins import run_after, run_before, sanity_function, variable
from reframe.core.exceptions import ReframeError, SanityError, SkipTestError

from ..constants import FEATURE_GPU, Extras
from ..contract import NODESTATE_EXPECTED_FILE, NODESTATE_FILE, NODESTATE_TAG
from .availability import gpus_per_node, selection, warn_unselected
from .mixins import require_account, site_interpreter, site_job_options
from .runlock import RunLock
from .scope import DistributeScope
from .software import SoftwareRecord

#: the keys a class must give at least one of to be judged (config/nodeclasses.py)
JUDGED_KEYS = ("gpu_model", "gpus", "links_up", "link_GBps", "pcie_gen", "pcie_width", "nics")


def load_classes(path):
    """(CLASSES, PARTITIONS) of the node classes file."""
    conf = runpy.run_path(path)
    return conf["CLASSES"], conf["PARTITIONS"]


def class_of(partition, classes, partitions, override="", path="config/nodeclasses.py"):
    """(class name, expected values) of ``partition``; a SkipTestError where it has no class
    or the class no expected values, a ReframeError (one line) where the class is unknown."""
    name = override or partitions.get(partition)
    if not name:
        raise SkipTestError(f"no node class for partition {partition}: add it to PARTITIONS in "
                            f"{path} (and the class's expected hardware to CLASSES), or give "
                            "-S node_class=NAME")
    if name not in classes:
        raise ReframeError(f"unknown node class {name!r} ({'-S node_class' if override else path}): "
                           f"{path} has {', '.join(sorted(classes))}")
    expected = classes[name] or {}
    if not any(expected.get(k) is not None for k in JUDGED_KEYS):
        raise SkipTestError(f"node class {name} has no expected hardware values: add "
                            f"{', '.join(JUDGED_KEYS)} to CLASSES[{name!r}] in {path}")
    return name, dict(expected, name=name)


def read_record(stdout):
    """The reader's record from the job's stdout, or None."""
    try:
        with open(stdout) as fp:
            lines = [line for line in fp if line.startswith(NODESTATE_TAG + " ")]
    except OSError:
        return None
    return json.loads(lines[-1][len(NODESTATE_TAG) + 1:]) if lines else None


@sn.deferrable
def nodestate_ok(stdout, stderr):
    """True where the reader found nothing wrong; a SanityError with its problems (or its
    error), a skip where the vendor's library is not installed."""
    record = read_record(stdout)
    if record is None:
        from .sanity import not_finished_reason
        raise SanityError(f"no {NODESTATE_TAG} line: {not_finished_reason(stderr)}")
    if record.get("skip"):
        raise SkipTestError(record["skip"])
    if record.get("error"):
        raise SanityError(record["error"])
    if record.get("problems"):
        raise SanityError("; ".join(record["problems"]))
    return True


class NodeStateBase(rfm.RunOnlyRegressionTest, RunLock, DistributeScope, SoftwareRecord):
    """The node-state check of every GPU partition; the leaf sets ``classes_file``."""

    #: config/nodeclasses.py: CLASSES (expected values) and PARTITIONS (partition -> class)
    classes_file = variable(str)
    #: the node class to judge against ('' : the partition's, from PARTITIONS)
    node_class = variable(str, value="")
    #: python interpreter for the reader ('' : the environment's extras['python'], else ReFrame's)
    python = variable(str, value="")
    #: whether the check is in the health set (--mode health selects it by this tag; the
    #: acceptance mode, which leaves the health set out, sets it to n)
    health_tag = variable(typ.Bool, value=True)
    #: one node, never emulated ones: what the acceptance modes' --filter-expr reads
    #: (config/modes.py: the per-node part selects num_nodes == 1)
    num_nodes = variable(int, value=1)
    emulate_nodes = variable(typ.Bool, value=False)
    num_tasks = 1
    time_limit = "5m"
    tags = {"gpucomm", "nodestate"}

    @run_after("init")
    def init_nodestate(self):
        self.valid_systems, self.valid_prog_environs = selection([f"+{FEATURE_GPU}"])
        self.descr = "the node's GPUs, links, PCIe, ECC, throttling and NICs against its node class"
        if self.health_tag:
            self.tags |= {"health"}
        self.keep_files = [NODESTATE_FILE, NODESTATE_EXPECTED_FILE]
        from .base import contact
        self.maintainers = [contact()]
        warn_unselected(self)

    @run_after("setup")
    def setup_nodestate(self):
        classes, partitions = load_classes(self.classes_file)
        shown = os.path.join(*self.classes_file.split(os.sep)[-2:])  # config/nodeclasses.py
        self.class_name, expected = class_of(self.current_partition.fullname, classes, partitions,
                                             self.node_class, shown)
        with open(os.path.join(self.stagedir, NODESTATE_EXPECTED_FILE), "w") as fp:
            json.dump(expected, fp, indent=1, sort_keys=True)
        self.num_gpus_per_node = gpus_per_node(self.current_partition)  # every GPU of the node
        self.executable = self.interpreter()
        self.executable_opts = ["-m", "gpucomm.site.nodestate", "--expect", NODESTATE_EXPECTED_FILE,
                                "--json", NODESTATE_FILE]
        self.descr += f" ({self.class_name})"

    @run_before("run")
    def no_launcher(self):
        # the batch script itself runs on the node: no MPI, no job step; the site's account
        # and job options (Alps' uenv, where the reader's venv lives) as every job of the site
        self.job.launcher = getlauncher("local")()
        require_account(self)
        self.job.options += site_job_options(self)

    def interpreter(self):
        return site_interpreter(self, self.current_environ.extras.get(Extras.RECIPE) or "docs/sites/",
                                "payload interpreter")  # the payload venv: one warning for both

    @sanity_function
    def validate(self):
        return nodestate_ok(str(self.stdout), str(self.stderr))
