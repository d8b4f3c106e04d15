"""The ReFrame library the checks in checks/ build on (hpctestlib style: documented bases,
small plugins, no @simple_test here).

* ``base.GpucommCheck``: one payload operation with one method;
* ``sweep.SweepCheck``: every offered method of one operation in one launch (health mode);
* ``pairmatrix.PairMatrixBase``: every GPU pair of a node, per-pair references;
* ``native.NativeCheck``: a native tool with the payload's perf variable names;
  ``native.OsuBase``, ``native.NcclTestsBase``: OSU and nccl-tests;
* ``noise.NoiseBase``: a victim quiet and under an aggressor in one job (the noise mode);
* ``mixins``: site options and multi-node placement, one plugin each;
* ``availability.unavailable``: "can this method run here?", for all of them;
* ``sanity``: reading a finished run.
"""

from .base import GpucommCheck
from .native import NativeCheck, NcclTestsBase, OsuBase
from .pairmatrix import PairMatrixBase
from .sweep import SweepCheck

__all__ = ["GpucommCheck", "NativeCheck", "NcclTestsBase", "OsuBase", "PairMatrixBase", "SweepCheck"]
