"""The hardware before the numbers, on every GPU partition in the health and acceptance modes:
every GPU of the node (model, count, NVLink/xGMI links, PCIe, ECC, retired and remapped pages,
throttle reasons) and every NIC (state, rate) against the node class's expected values
(config/nodeclasses.py), read through NVML (nvidia-ml-py) or AMD SMI (amdsmi) on the node
(gpucomm.rfm.nodestate, gpucomm.site.nodestate).  A failure names the GPU and the link.
"""

import os

import reframe as rfm

from gpucomm.rfm import NodeStateBase


@rfm.simple_test
class NodeStateCheck(NodeStateBase):
    classes_file = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                                 "config", "nodeclasses.py"))
