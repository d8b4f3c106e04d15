"""Run modes shared by every system (``reframe --mode NAME``), read by config/settings.py.

* health (or nightly, the same): the nightly check, in about a minute per node: the HealthCheck
  sweeps (checks/health.py), one launch per operation running every method the partition offers, 8 B, 1 MiB and 64 MiB,
  a time budget per size.
* acceptance: every check of one node, its full sweep (powers of two up to 1 GiB) with the
  payload's default iteration counts, for a new or repaired system; with ``--distribute=avail
  -J reservation=NAME`` once on every node of the batch, each node its own verdict
  (docs/acceptance.md; unscoped, ``--distribute`` takes the whole partition and rfm.scope warns).  The
  health sweeps stay out (their checks run in full), the pair matrices run.
* acceptance-node: the same checks of one node as acceptance, run by one job per node
  (NodeAcceptanceCheck, checks/nodejob.py: each check's own launch, in turn, in one job):
  ``--distribute=avail -J reservation=NAME --repeat=5`` makes nodes x repeats jobs, not nodes x
  checks x repeats (docs/acceptance.md: for a cabinet or more).
* acceptance-network: the checks across nodes (num_nodes > 1), once: the node pair matrix
  (``-S PairMatrixCheck.num_nodes=N -S PairMatrixCheck.ranks_per_node=1``: every pair of N nodes,
  in N-1 rounds of disjoint pairs; the batch's nodes by ``-S PairMatrixCheck.nodelist=...``),
  multi ping-pong, scaling.  Never with ``--distribute``.
* paper: the same sweep with 100 iterations per size, the paper's usual sample count
  (paper_reference.md), to compare with the committed references of Figs. 3, 5, 6 and 7, and
  the scaling checks up to 512 nodes (Figs. 9 and 10).
* noise: opt-in only, the checks tagged ``noise`` (checks/noise.py: a victim quiet and under an
  aggressor), with ``load_fabric=y``, without which NoiseCheck skips itself: a plain
  ``reframe -c checks/ -r`` never loads the network.  Never part of health, acceptance or paper,
  which exclude the tag too, so a nightly run never adds traffic to a shared network unless
  asked (docs/sites/*.md).

The modes that keep results (health/nightly, acceptance, paper) add ``--timestamp`` (each session
its own output/<timestamp>-<pid>/ and stage/<timestamp>-<pid>/, never the last night's
overwritten, nor a run's that started in the same second) and a
per-session JSON report (config/results.py's SESSION_REPORT, ``{sessionid}`` numbered); every
session that runs is also stored in ReFrame's results database (config/results.py), which
``--performance-compare`` reads.  An option given on the command line wins over the mode's
(e.g. ``--report-file run.json``).
"""

import ast
import glob
import os
import runpy

_HERE = os.path.dirname(os.path.abspath(__file__))
_RESULTS = runpy.run_path(os.path.join(_HERE, "results.py"))
#: the bases of the checks without a payload (no soak variables): the node-state reader
#: (rfm.NodeStateBase) and the configuration guard (rfm.ConfigGuard)
_NO_PAYLOAD = {"NodeStateBase", "ConfigGuard", "NodeAcceptanceBase"}


def _test_classes(folder):
    """{test class (@simple_test) under ``folder``: (the names of its bases, followed through the
    classes of ``folder``; the variables those classes define)}, read from the source without
    importing it, so that a mode's -S reaches only the checks that have the variable (ReFrame
    warns "the following variables were not set" for every other one it selects)."""
    classes = {}
    for path in sorted(glob.glob(os.path.join(folder, "**", "*.py"), recursive=True)):
        with open(path) as fp:
            classes.update((n.name, n) for n in ast.parse(fp.read()).body if isinstance(n, ast.ClassDef))

    def lineage(name, seen=()):
        node = classes.get(name)
        if node is None or name in seen:
            return {name}, set()
        names = {name}
        defined = {t.id for st in node.body if isinstance(st, ast.Assign) and "variable(" in ast.unparse(st.value)
                   for t in st.targets if isinstance(t, ast.Name)}
        for base in node.bases:
            more, variables = lineage(ast.unparse(base).split(".")[-1], (*seen, name))
            names, defined = names | more, defined | variables
        return names, defined

    return {name: lineage(name) for name, node in classes.items()
            if any("simple_test" in ast.unparse(d) for d in node.decorator_list)}


_TESTS = _test_classes(os.path.join(_HERE, os.pardir, "checks"))
_COMMON = ["--tag=gpucomm", "--exec-policy=async"]
#: what a mode whose results are kept adds: its own directories and report per session
#: (the timestamp ends in this ReFrame process's pid: two runs started in the same second, two
#: nightly jobs on one login node, get their own directories)
_KEEP = [f"--timestamp=%Y%m%dT%H%M%S%z-{os.getpid()}", f"--report-file={_RESULTS['SESSION_REPORT']}"]
#: acceptance's soak: every timed sample's data checked at 8 B and 1 MiB (nccl-tests' -c; the
#: intermittent corruption of NVIDIA/nccl #2001 showed at 1 MiB), in the checks that sweep them
#: (soak_where_swept: one of another sweep, e.g. a scaling check's one size, runs without it).
#: Scoped to the payload checks of checks/ (-S CHECK.VAR=VALUE): an unscoped -S makes ReFrame
#: warn for every selected check without the variable (NodeStateCheck: "the following variables
#: were not set"); a check of another folder takes its own -S validate_every=1 -S validate_sizes=8,1M
_SOAK = [f"--setvar={check}.{var}" for check, (bases, _) in _TESTS.items() if not bases & _NO_PAYLOAD
         for var in ("validate_every=1", "validate_sizes=8,1M", "soak_where_swept=y")]
#: the paper's scaling to 512 nodes (Figs. 9 and 10): the checks that define max_nodes (the
#: scaling checks, checks/internode.py), not every check the mode selects
_TO_512 = [f"--setvar={check}.max_nodes=512" for check, (_, variables) in _TESTS.items()
           if "max_nodes" in variables]
#: health: the pair matrix's many cases (every pair, every round, each size) sample their
#: iterations only (precision_target=0: no blocks added up to its 0.25 s budget per case, which
#: would bound the health minute by the case count, not by the sweeps)
#: the GPU data paths (checks/datapaths.py) in health: one size per path (acceptance: the sweep)
_HEALTH = _COMMON + _KEEP + ["--tag=health", "--setvar=PairMatrixCheck.budget=0.25",
                             "--setvar=PairMatrixCheck.precision_target=0",
                             "--setvar=DataPathsCheck.sizes=256M"]
#: ReFrame's --distribute pins every selected test to one node, whatever its num_nodes (only
#: single-node jobs can be distributed: ReFrame's manual; reframe-hpc/reframe#2498): the per-node
#: part of acceptance selects the checks of one node, the network part the others
#: (ReFrame splits a mode's options as a shell does: the expression is quoted)
_ONE_NODE = "--filter-expr='num_nodes == 1 or emulate_nodes'"
_ACROSS_NODES = "--filter-expr='num_nodes > 1 and not emulate_nodes'"
#: acceptance leaves out the health sweeps (tag sweep; the pair matrices, tagged health too, stay)
_ACCEPTANCE = _COMMON + _KEEP + ["--exclude-tag=sweep", "--exclude-tag=noise"]

#: acceptance-node: the node job alone (its tag; it selects no partition unless -S node_job=y),
#: the checks it runs inside with acceptance's variables (the soak, NodeStateCheck's tag)
_NODE_JOB = ["--tag=acceptance-node", "--exec-policy=async", "--setvar=NodeAcceptanceCheck.node_job=y"]

site_configuration = {
    "modes": [
        {"name": "health", "options": _HEALTH},
        {"name": "nightly", "options": _HEALTH},
        {"name": "acceptance", "options": _ACCEPTANCE + _SOAK + [_ONE_NODE]},
        {"name": "acceptance-node", "options": _NODE_JOB + _KEEP + ["--exclude-tag=sweep", "--exclude-tag=noise"]
                                                  + _SOAK},
        {"name": "acceptance-network", "options": _ACCEPTANCE + _SOAK + [_ACROSS_NODES]},
        {"name": "paper", "options": _COMMON + _KEEP + ["--exclude-tag=health", "--exclude-tag=noise",
                                                        "--setvar=iters=100", "--setvar=paper_tuning=y",
                                                        *_TO_512]},
        {"name": "noise", "options": _COMMON + ["--tag=noise", "--setvar=load_fabric=y"]},
    ],
}

# the node-state check (checks/nodestate.py) vets a node in health and in acceptance: health
# selects it by its 'health' tag, acceptance (which leaves the health set out) by turning that
# tag off
for _mode in site_configuration["modes"]:
    if _mode["name"] in ("acceptance", "acceptance-node"):
        _mode["options"] = _mode["options"] + ["--setvar=NodeStateCheck.health_tag=n"]
