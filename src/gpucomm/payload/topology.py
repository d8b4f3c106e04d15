"""Where a rank runs: its node-local rank, its node, how far the nodes are apart on the network,
and the nominal bandwidth of its links."""

import os
import re
import shutil
import socket
import subprocess

from ..constants import PLACEMENTS
from ..pairs import switch_distance

# launcher-provided node-local rank, in order of preference
LOCAL_RANK_VARS = ("SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                   "PMI_LOCAL_RANK", "PALS_LOCAL_RANKID", "MV2_COMM_WORLD_LOCAL_RANK",
                   "LOCAL_RANK")
GLOBAL_RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", "PALS_RANKID")

# PCIe per-lane throughput per direction after encoding, GB/s, by generation
_PCIE_LANE_GBPS = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}


def env_rank():
    """The global rank as the launcher sets it before MPI_Init, or None."""
    for var in GLOBAL_RANK_VARS:
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return None


def local_rank(comm, MPI):
    """(node-local rank, ranks on this node, node index) of the calling rank.

    The node is the MPI shared-memory domain (COMM_TYPE_SHARED), so any launcher and any
    number of ranks per node work, merged with the ranks of the same host name (srun through
    Debian's PMIx plugin gives Open MPI no locality: every rank is its own domain there); the
    local rank prefers the launcher's variable so that it matches the launcher's GPU binding.
    """
    shared = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.rank)
    leader = shared.allreduce(comm.rank, op=MPI.MIN)
    shared.Free()
    node_of = node_index(comm.allgather((socket.gethostname(), leader)))
    mine = [r for r, n in enumerate(node_of) if n == node_of[comm.rank]]
    lrank = mine.index(comm.rank)
    for var in LOCAL_RANK_VARS:
        value = os.environ.get(var, "")
        if value.isdigit():
            lrank = int(value)
            break
    return lrank, len(mine), node_of[comm.rank]


def node_index(keys):
    """Node index of every rank from its (host name, shared-memory domain) key: ranks sharing
    either are one node; nodes are numbered in the order of their lowest global rank."""
    parent = list(range(len(keys)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first = {}
    for rank, (host, domain) in enumerate(keys):
        for key in (("host", host), ("domain", domain)):
            other = first.setdefault(key, rank)
            parent[max(root(rank), root(other))] = min(root(rank), root(other))
    roots = [root(r) for r in range(len(keys))]
    order = sorted(set(roots))
    return [order.index(r) for r in roots]


def emulated_nodes(nranks, ranks_per_node):
    """Node index of every rank when consecutive groups of ``ranks_per_node`` ranks are treated
    as nodes (--ranks-per-node): a multi-node run emulated on one machine."""
    if nranks % ranks_per_node:
        return None
    return [r // ranks_per_node for r in range(nranks)]


def topology_addr(hostname):
    """This node's place in the network as Slurm's topology/tree plugin sets it for every task:
    SLURM_TOPOLOGY_ADDR, switches from the top level down to the leaf, then the node, joined by
    dots.  None where it is unset, or where it names another node (a rank started by mpirun
    inside an allocation inherits the batch node's value)."""
    addr = os.environ.get("SLURM_TOPOLOGY_ADDR", "").strip()
    if not addr:
        return None
    last = addr.split(".")[-1]
    names = {os.environ.get("SLURMD_NODENAME", ""), hostname, hostname.split(".")[0]}
    return addr if last in names else None


def cray_xname():
    """The HPE Cray EX component name of this node (/etc/cray/xname), recorded for reference."""
    try:
        with open("/etc/cray/xname") as fp:
            return fp.read().strip() or None
    except OSError:
        return None


def placement_of(addrs):
    """(distance, source) of a job's nodes: the largest pairwise distance, from the topology
    addresses of its (physical) nodes; ('same-node', ...) for one node; ('unknown', why) where
    a node has no address."""
    if len(addrs) == 1:
        return "same-node", "one node"
    if any(a is None for a in addrs):
        return "unknown", "no SLURM_TOPOLOGY_ADDR (Slurm without topology/tree, or not srun)"
    order = ("same-node",) + PLACEMENTS
    worst = max((switch_distance(a, b) for i, a in enumerate(addrs) for b in addrs[i + 1:]),
                key=order.index)
    return worst, "SLURM_TOPOLOGY_ADDR"


def _smi(args, timeout=15):
    exe = shutil.which("nvidia-smi")
    if not exe:
        return ""
    try:
        out = subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout if out.returncode == 0 else ""


def parse_nvlink_status(text):
    """Sum of the per-link speeds (GB/s, one direction) in ``nvidia-smi nvlink -s`` output."""
    total = 0.0
    for m in re.finditer(r"Link\s+\d+:\s*([\d.]+)\s*GB/s", text):
        total += float(m.group(1))
    return total


def nominal_gpu_link_GBps(pci_bus_id):
    """Nominal one-direction bandwidth out of the GPU: its NVLinks, else its PCIe link; or None."""
    nvlink = parse_nvlink_status(_smi(["nvlink", "-s", "-i", pci_bus_id]))
    if nvlink > 0:
        return nvlink
    return nominal_pcie_GBps(pci_bus_id)


def nominal_pcie_GBps(pci_bus_id):
    out = _smi(["--query-gpu=pcie.link.gen.max,pcie.link.width.max", "--format=csv,noheader,nounits",
                "-i", pci_bus_id])
    m = re.match(r"\s*(\d+)\s*,\s*(\d+)", out)
    if not m:
        return None
    gen, width = int(m.group(1)), int(m.group(2))
    lane = _PCIE_LANE_GBPS.get(gen)
    return lane * width if lane else None


#: the link that bounds a method's bandwidth (Method.nominal_link): the GPU's links to its peers
#: (NVLink, else PCIe), or its PCIe link to the host (a method whose bytes cross host memory)
LINK_GPU, LINK_PCIE = "gpu", "pcie"
#: link -> (its nominal one-direction GB/s from the GPU's PCI bus id, where the figure comes from)
NOMINAL_LINKS = {LINK_GPU: (nominal_gpu_link_GBps, "nvidia-smi nvlink/PCIe"),
                 LINK_PCIE: (nominal_pcie_GBps, "nvidia-smi PCIe link")}
