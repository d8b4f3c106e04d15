"""What each node class's hardware must show: the NodeStateCheck's expected values (checks/nodestate.py,
gpucomm.rfm.nodestate; the reader gpucomm.site.nodestate judges a node against them).

A class is a dict of these keys (a key left out, or None, is not judged):

* ``vendor``: nvidia or amd (whose library reads it: nvidia-ml-py or amdsmi);
* ``gpu_model``: a part of the name the library gives every GPU (NVML's nvmlDeviceGetName,
  AMD SMI's market name); ``gpus``: how many per node (GCDs on MI250X);
* ``links_up``: GPU-to-GPU links (NVLink, xGMI) up per GPU; ``link_GBps``: the least speed of
  each, GB/s per direction (a link reported down fails even where the count is not judged);
* ``pcie_gen``, ``pcie_width``: the GPU's PCIe link (the width now; the generation at its
  maximum and, unless idle, now);
* ``nics``: {kind: net (/sys/class/net) or ib (/sys/class/infiniband ports), names: a glob,
  count, rate_Gbps: each one's least rate}.

ECC errors, pending retirements and remaps and the throttle reasons that mean trouble are
judged on every class.  Every value cites its source; UNCONFIRMED where none was found.

``PARTITIONS`` names the class of each partition (ReFrame's full name); ``-S node_class=NAME``
overrides it.  ``python3 config/nodeclasses.py NAME`` prints a class as the reader's --expect
file.
"""

import json
import sys

CLASSES = {
    # The lent one-GPU machine of an NVLink board (kind nvidia-h200).  NVML there (nvidia-ml-py
    # 13.610.43, issue 30 "Proof", 2026-12-01): PCIe generation 5, width 16 (current = max),
    # nvmlDeviceGetNvLinkState "Not Supported" on all 18 links: one GPU of the board shows no
    # link, so this class expects none.
    "h200-sxm-1gpu": {
        "vendor": "nvidia", "gpu_model": "H200", "gpus": 1,
        "links_up": 0, "link_GBps": None,
        "pcie_gen": 5, "pcie_width": 16,
        "nics": None,  # the lent machine's NICs are not part of the class
    },
    # The two-GPU machine (kind nvidia-h200-x2, NV18): 18 links up per GPU at 26.562 GB/s each
    # (tests/data/h200x2/nvidia-smi-nvlink-s.txt, that machine's nvidia-smi nvlink -s); NVLink4
    # is 25 GB/s per direction per link (NVIDIA H200 datasheet: 900 GB/s NVLink over 18 links,
    # both directions).  PCIe gen 5 x16: NVIDIA H200 datasheet (PCIe Gen5 128 GB/s).
    "h200-sxm-nv18": {
        "vendor": "nvidia", "gpu_model": "H200", "gpus": 2,
        "links_up": 18, "link_GBps": 25,
        "pcie_gen": 5, "pcie_width": 16,
        "nics": None,
    },
    # Alps GH200 nodes (HPE Cray EX254n): 4 GH200 per node (cscs-docs docs/alps/hardware.md:
    # 2688 nodes, 10,752 GPUs).  NVLink4 between the GPUs: the paper's pair bandwidth 150 GB/s
    # (Fig. 3, config/systems/alps.py) is 6 links of 25 GB/s per peer, 18 per GPU to its 3
    # peers (NVIDIA GH200 datasheet: 18 NVLink4 links, 900 GB/s) -- the 6-per-peer wiring is
    # derived, UNCONFIRMED by a CSCS page.  The Grace CPU is reached over NVLink-C2C, not PCIe:
    # what NVML reports as the PCIe link there is UNCONFIRMED, so PCIe is not judged.  NICs:
    # 4 x Slingshot-11 at 200 Gb/s (config/systems/alps.py, cscs-docs hardware.md), named hsn0-3:
    # CSCS's own checks expect exactly those on +nvgpu (cscs-rfm@2f813557 checks/system/network/
    # cxi_stat_hsn.py, hsn0..hsn3 from cxi_stat; checks/system/integration/alps.py, hsn0-3 UP).
    # What the cxi driver writes to sysfs speed is UNCONFIRMED.
    "gh200-x4": {
        "vendor": "nvidia", "gpu_model": "GH200", "gpus": 4,
        "links_up": 18, "link_GBps": 25,
        "pcie_gen": None, "pcie_width": None,
        "nics": {"kind": "net", "names": "hsn*", "count": 4, "rate_Gbps": 200},
    },
    # Leonardo Booster (CINECA): 4 x A100 SXM4 64 GB per node, NVLink3 all-to-all
    # (docs.hpc.cineca.it leonardo.html; config/systems/leonardo.py).  A100: 12 NVLink3 links,
    # 600 GB/s both directions = 25 GB/s per direction per link (NVIDIA A100 datasheet), 4 per
    # peer in a 4-GPU all-to-all board (the paper's pair bandwidth 100 GB/s, Fig. 3).  PCIe Gen4
    # x16 (NVIDIA A100 datasheet: PCIe Gen4 64 GB/s).  NICs: 4 HDR100 ports mlx5_0..3 at
    # 100 Gb/s (2 dual-port HDR100 cards: the paper, docs/sites/SOURCES.md).  NVML's name of
    # the 64 GB part ("A100-SXM-64GB") is UNCONFIRMED: the model is matched on "A100".
    "a100-sxm4-64gb-x4": {
        "vendor": "nvidia", "gpu_model": "A100", "gpus": 4,
        "links_up": 12, "link_GBps": 25,
        "pcie_gen": 4, "pcie_width": 16,
        "nics": {"kind": "ib", "names": "mlx5_*/1", "count": 4, "rate_Gbps": 100},
    },
    # LUMI-G (HPE Cray EX235a): 4 x MI250X = 8 GCDs per node, each GCD a GPU to the software
    # (docs.lumi-supercomputer.eu hardware/lumig: "If you do a hipGetDeviceCount ... 8").  The
    # two GCDs of one MI250X: in-package Infinity Fabric, 400 GB/s both directions; GCDs of
    # different MI250X: one or two Infinity Fabric links of 100 GB/s both directions (same
    # page).  How many xGMI link slots AMD SMI reports per GCD is UNCONFIRMED: the count is not
    # judged, a link reported down fails.  The GCDs reach the CPU over Infinity Fabric (same
    # page: 36 GB/s per GCD): PCIe not judged.  NICs: 4 x Slingshot-11 200 Gb/s, one per MI250X,
    # hsn0-3 (same page; lumi-rfm rccl_test.py NCCL_SOCKET_IFNAME=hsn0,hsn1,hsn2,hsn3); the
    # sysfs speed the cxi driver writes is UNCONFIRMED.
    "mi250x-x4": {
        "vendor": "amd", "gpu_model": "MI250X", "gpus": 8,
        "links_up": None, "link_GBps": None,
        "pcie_gen": None, "pcie_width": None,
        "nics": {"kind": "net", "names": "hsn*", "count": 4, "rate_Gbps": 200},
    },
}

#: partition (ReFrame's full name) -> node class; the local system's partition is named after
#: the GPU model and count (config/systems/local.py)
PARTITIONS = {
    "local:h200x1": "h200-sxm-1gpu",
    "local:h200x2": "h200-sxm-nv18",
    # bench/gpu-cluster.sh's namespace "nodes" share the lent one-GPU machine (kind nvidia-h200):
    # NVML on each node sees that machine's one H200 (the reader counts every GPU NVML lists, not
    # the job's GRES), so each node is of the machine's class; a cluster brought up on another
    # machine gives -S node_class=NAME (docs/gpu-cluster.md)
    "gpucluster:gpu": "h200-sxm-1gpu",
    "gpucluster:gpu-plugin": "h200-sxm-1gpu",
    "alps:gh200": "gh200-x4",
    "leonardo:booster": "a100-sxm4-64gb-x4",
    "lumi:standard-g": "mi250x-x4",
}


def expected(name):
    """The class ``name`` as the reader's --expect file holds it (its name added)."""
    return dict(CLASSES[name], name=name)


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CLASSES:
        sys.exit(f"usage: {sys.argv[0]} CLASS (one of {', '.join(CLASSES)})")
    print(json.dumps(expected(sys.argv[1]), indent=1, sort_keys=True))
