"""Every GPU's own data paths, on every GPU partition in the health and acceptance modes: host
-> device, device -> host and both at once over the GPU's link (copy engine and SM), from pinned
host memory on the GPU's own NUMA node and on the farthest, and its device-local copy; every
GPU alone and all at once (gpucomm.rfm.datapaths; payload operation gpu-datapaths).  One perf
variable per GPU (index and PCI bus id) and the node's slowest, against its node class's
references (config/references/datapaths.yaml).  On a partition without GPUs: a SKIP saying so.

Health (config/modes.py): one size per path, 256 MiB; acceptance: the full sweep, 4 KiB to
1 GiB.  ``-S host_numa=near`` leaves the far node out, ``-S paths=h2d-ce,...`` chooses paths.
"""

import os

import reframe as rfm

from gpucomm.rfm import DataPathsBase

_REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))


@rfm.simple_test
class DataPathsCheck(DataPathsBase):
    classes_file = os.path.join(_REPO, "config", "nodeclasses.py")
    references_file = os.path.join(_REPO, "config", "references", "datapaths.yaml")
