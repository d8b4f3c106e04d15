"""The ReFrame library the checks in checks/ build on (hpctestlib style: documented bases,
small plugins, no @simple_test here).

* ``base.GpucommCheck``: one payload operation with one method;
* ``sweep.SweepCheck``: every offered method of one operation in one launch (health mode);
* ``pairmatrix.PairMatrixBase``: every GPU pair of a node, per-pair references;
* ``native.NativeCheck``: a native tool with the payload's perf variable names;
  ``native.OsuBase``, ``native.NcclTestsBase``: OSU and nccl-tests;
* ``noise.NoiseBase``: a victim quiet and under an aggressor in one job (the noise mode);
  ``noise.VICTIM_OPS``: the operations a victim may run;
* ``nodejob.NodeAcceptanceBase``: every check of one node in one job (acceptance-node mode);
* ``nodestate.NodeStateBase``: a node's hardware state against its class (no payload);
* ``nicpath.NicPathBase``: the network path of one node, NIC by NIC;
* ``datapaths.DataPathsBase``: every GPU's own host <-> device and device-memory paths;
* ``guard.ConfigGuard``: under another ReFrame configuration, the one check selected;
* ``mixins``: site options and multi-node placement, one plugin each;
* ``availability.unavailable``: "can this method run here?", for all of them;
* ``sanity``: reading a finished run;
* ``quickwarn``: ReFrame's ignored deprecation warnings skipped before their stack walk.

Everything checks/ uses is exported here: checks import from ``gpucomm.rfm``, never past it.
"""

from . import quickwarn, setvars
from .base import GpucommCheck
from .datapaths import DataPathsBase
from .guard import ConfigGuard
from .native import NativeCheck, NcclTestsBase, OsuBase
from .nicpath import NicPathBase
from .nodejob import NodeAcceptanceBase
from .nodestate import NodeStateBase
from .noise import VICTIM_OPS, NoiseBase
from .pairmatrix import PairMatrixBase
from .sweep import SweepCheck

quickwarn.install()
setvars.check_reframe_values()

__all__ = ["VICTIM_OPS", "ConfigGuard", "DataPathsBase", "GpucommCheck", "NativeCheck", "NcclTestsBase", "NicPathBase",
           "NodeAcceptanceBase", "NodeStateBase", "NoiseBase", "OsuBase", "PairMatrixBase", "SweepCheck"]
