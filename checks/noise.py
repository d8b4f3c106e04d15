"""Network noise (the paper's noise study): a victim measured alone, then while an aggressor on
other nodes loads the links it shares with them (rfm.noise.NoiseBase has the job's steps, the
sanity and the perf variables).

* ``victim``: pingpong (one rank on each of 2 nodes) or allreduce (every GPU of 2 nodes), at
  ``-S small_size`` (8 B) and ``-S large_size`` (16 MiB); perf variables quiet_time_<size>,
  noisy_time_<size> (us), victim_slowdown_<size> = noisy / quiet, victim_spread_<size> and
  quiet_spread_<size> ((p95 - p05) / median), aggressor_GBps.
* ``layout``: shared-link (victim across two leaf switches, aggressor on the same two),
  same-switch (all on one leaf switch), apart (victim in one switch, aggressor elsewhere).
* the aggressor: ``-S aggressor_pattern=streams|alltoall``, ``-S aggressor_size``,
  ``-S aggressor_bandwidth`` (GB/s per rank, 0 = as fast as possible), ``-S aggressor_nodes``,
  ``-S aggressor_method`` (default: the victim's).
* ``-S service_level=N -S service_level_to=victim|aggressor|both`` (InfiniBand partitions):
  the paper's default-SL / dedicated-SL comparison.

Opt-in: it loads a shared network, so it is skipped unless ``--mode noise`` (or
``-S load_fabric=y``) asks for it; a plain ``reframe -c checks/ -r`` and the nightly modes never
run it.  On one machine, ``-S emulate_nodes=y`` runs victim and aggressor as rank groups.
"""

import reframe as rfm
from reframe.core.builtins import parameter

from gpucomm.constants import METHODS, NOISE_LAYOUTS
from gpucomm.rfm import VICTIM_OPS, NoiseBase


@rfm.simple_test
class NoiseCheck(NoiseBase):
    method = parameter([m for m in METHODS if m != "ipc-copy"])  # ipc-copy: one node only
    victim = parameter(list(VICTIM_OPS))
    layout = parameter(list(NOISE_LAYOUTS))
