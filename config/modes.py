"""Run modes shared by every system (``reframe --mode NAME``), read by config/settings.py.

* health: the nightly check, in about a minute per node: the HealthCheck sweeps (checks/health.py),
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
"""

_COMMON = ["--tag=gpucomm", "--exec-policy=async"]

site_configuration = {
    "modes": [
        {"name": "health", "options": _COMMON + ["--tag=health", "--setvar=PairMatrixCheck.budget=0.25"]},
        {"name": "acceptance", "options": _COMMON + ["--exclude-tag=health", "--exclude-tag=noise"]},
        {"name": "paper", "options": _COMMON + ["--exclude-tag=health", "--exclude-tag=noise",
                                                "--setvar=iters=100", "--setvar=max_nodes=512",
                                                "--setvar=paper_tuning=y"]},
        {"name": "noise", "options": _COMMON + ["--tag=noise", "--setvar=load_fabric=y"]},
    ],
}
