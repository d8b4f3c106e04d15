"""Run modes shared by every system (``reframe --mode NAME``), read by config/settings.py.

* health (or nightly, the same): the nightly check, in about a minute per node: the HealthCheck sweeps (checks/health.py),
  one launch per operation running every method the partition offers, 8 B, 1 MiB and 64 MiB,
  a time budget per size.
* acceptance: every check's full sweep (powers of two up to 1 GiB) with the payload's default
  iteration counts, for a new or repaired system.
* paper: the same sweep with 100 iterations per size, the paper's usual sample count
  (paper_reference.md), to compare with the committed references of Figs. 3, 5, 6 and 7, and
  the scaling checks up to 512 nodes (Figs. 9 and 10).
* noise: opt-in only, the checks tagged ``noise`` (checks/noise.py: a victim quiet and under an
  aggressor), with ``load_fabric=y``, without which NoiseCheck skips itself: a plain
  ``reframe -c checks/ -r`` never loads the network.  Never part of health, acceptance or paper,
  which exclude the tag too, so a nightly run never adds traffic to a shared network unless
  asked (docs/sites/*.md).

The modes that keep results (health/nightly, acceptance, paper) add ``--timestamp`` (each session
its own output/<timestamp>/ and stage/<timestamp>/, never the last night's overwritten) and a
per-session JSON report (config/results.py's SESSION_REPORT, ``{sessionid}`` numbered); every
session that runs is also stored in ReFrame's results database (config/results.py), which
``--performance-compare`` reads.  An option given on the command line wins over the mode's
(e.g. ``--report-file run.json``).
"""

import os
import runpy

_RESULTS = runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "results.py"))

_COMMON = ["--tag=gpucomm", "--exec-policy=async"]
#: what a mode whose results are kept adds: its own directories and report per session
_KEEP = ["--timestamp", f"--report-file={_RESULTS['SESSION_REPORT']}"]
_HEALTH = _COMMON + _KEEP + ["--tag=health", "--setvar=PairMatrixCheck.budget=0.25"]

site_configuration = {
    "modes": [
        {"name": "health", "options": _HEALTH},
        {"name": "nightly", "options": _HEALTH},
        {"name": "acceptance", "options": _COMMON + _KEEP + ["--exclude-tag=health", "--exclude-tag=noise"]},
        {"name": "paper", "options": _COMMON + _KEEP + ["--exclude-tag=health", "--exclude-tag=noise",
                                                        "--setvar=iters=100", "--setvar=max_nodes=512",
                                                        "--setvar=paper_tuning=y"]},
        {"name": "noise", "options": _COMMON + ["--tag=noise", "--setvar=load_fabric=y"]},
    ],
}

# the node-state check (checks/nodestate.py) vets a node in health and in acceptance: health
# selects it by its 'health' tag, acceptance (which leaves the health set out) by turning that
# tag off
for _mode in site_configuration["modes"]:
    if _mode["name"] == "acceptance":
        _mode["options"] = _mode["options"] + ["--setvar=NodeStateCheck.health_tag=n"]
