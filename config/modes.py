"""Run modes shared by every system (``reframe --mode NAME``), read by config/settings.py.

* health: the nightly check: 4 sizes (the 8 B latency, 1 MiB, 64 MiB and 1 GiB goodput perf
  variables), 20 timed iterations each; minutes per node.
* acceptance: every check's full sweep (powers of two up to 1 GiB) with the payload's default
  iteration counts, for a new or repaired system.
* paper: the same sweep with 100 iterations per size, the paper's usual sample count
  (paper_reference.md), to compare with the committed references of Figs. 3, 5, 6 and 7, and
  the scaling checks up to 512 nodes (Figs. 9 and 10).
"""

_COMMON = ["--tag=gpucomm", "--exec-policy=async"]

site_configuration = {
    "modes": [
        {"name": "health",
         "options": _COMMON + ["--setvar=sizes=8,1M,64M,1G", "--setvar=iters=20",
                               "--setvar=warmup=2"]},
        {"name": "acceptance", "options": _COMMON},
        {"name": "paper", "options": _COMMON + ["--setvar=iters=100", "--setvar=max_nodes=512"]},
    ],
}
