"""DistributeScope: the warning of a ``--distribute`` run that is about to touch a whole partition.

ReFrame's ``--distribute=STATE`` makes one test case of every selected check on every node of
the partition in STATE (``all``: every node, DOWN and DRAIN ones included: ReFrame 4.10's
``filternodes_by_state('all')`` returns the list untouched), narrowed only by the job options it
reads for that (``-J reservation=NAME``, ``-J nodelist=...``/``-J w=...``, ``-J exclude=...``:
its Slurm backend's ``filternodes``).  On a production partition that is every node times every
check (Alps' normal: 1,266 nodes x 37 checks), so a distributed run without any of them is
warned about once per partition, with the node count and the scoped forms of docs/acceptance.md
("Scoping the run").  A warning, not a refusal: a site may mean it.
"""

import sys

from reframe.core.builtins import run_after
from reframe.core.logging import getlogger
from reframe.core.pipeline import RegressionTestPlugin

from . import plan

#: the job options (-J NAME=...) that narrow ReFrame's --distribute to some nodes
SCOPING_OPTIONS = ("reservation", "nodelist", "w", "exclude", "x")
#: partitions already warned about in this ReFrame process
_WARNED = set()


def job_options(argv):
    """The ``-J``/``--job-option`` values of a ReFrame command line, in order."""
    out, args = [], list(argv)
    for i, arg in enumerate(args):
        if arg in ("-J", "--job-option") and i + 1 < len(args):
            out.append(args[i + 1])
        elif arg.startswith("--job-option="):
            out.append(arg.split("=", 1)[1])
        elif arg.startswith("-J") and len(arg) > 2:
            out.append(arg[2:])
    return out


def distribute_state(argv):
    """The STATE of ``--distribute[=STATE]`` on a ReFrame command line, or None."""
    args = list(argv)
    for i, arg in enumerate(args):
        if arg.startswith("--distribute="):
            return arg.split("=", 1)[1].lower()
        if arg == "--distribute":
            nxt = args[i + 1] if i + 1 < len(args) else ""
            return nxt.lower() if nxt and not nxt.startswith("-") else "idle"
    return None


def scoped_by(argv):
    """The job options of ``argv`` that narrow the distribution to some nodes."""
    return [o for o in job_options(argv) if o.lstrip("-").split("=", 1)[0] in SCOPING_OPTIONS]


def unscoped_warning(partition, nodes, argv):
    """The one-line warning of a distribution over ``nodes`` nodes of ``partition`` with no
    scoping option in ``argv``, or None."""
    state = distribute_state(argv)
    if state is None or scoped_by(argv):
        return None
    which = "every node, DOWN and DRAIN ones included" if state == "all" else f"every node in state {state}"
    return (f"--distribute={state} without -J reservation=..., -J nodelist=... or -J exclude=...: one job "
            f"of each check on {nodes} node(s) of {partition} ({which}); to accept a batch of new nodes, "
            "scope the run (docs/acceptance.md, 'Scoping the run')")


class DistributeScope(RegressionTestPlugin):
    """Warn once per partition where ``--distribute`` is about to touch the whole partition."""

    @run_after("init")
    def warn_unscoped_distribute(self):
        nid = getattr(self, ".nid", None)  # ReFrame's --distribute parameter (frontend.testgenerators)
        if nid is None:
            return
        partition = self.valid_systems[0] if self.valid_systems else "?"
        plan.tally(partition, type(self).__name__, _params(self.display_name), tuple(nid),
                   getattr(self, ".repeat_no", None), plan.parse_time(self.time_limit),
                   max(1, getattr(self, "real_nodes", 1)))
        if partition in _WARNED:
            return
        nodes = len(type(self).param_space[".nid"])
        line = unscoped_warning(partition, nodes, sys.argv[1:])
        _WARNED.add(partition)
        if line:
            getlogger().warning(line)

    @run_after("setup")
    def plan_distributed_run(self):
        """The plan of the session's distributed jobs, before the first is submitted (rfm.plan); a
        job whose time limit its own set-up decides (rfm.nodejob) plans there."""
        if not getattr(self, "plans_at_setup", False):
            plan.plan_before_submitting(self, type(self).__name__)


def _params(display_name):
    """A display name without the parameters --distribute and --repeat add."""
    return " ".join(w for w in display_name.split() if not w.startswith("%."))


__all__ = ["DistributeScope", "distribute_state", "job_options", "scoped_by", "unscoped_warning"]
