"""Where a rank runs: its node-local rank, its GPU, and the nominal bandwidth of its links."""

import os
import re
import shutil
import subprocess

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
    number of ranks per node work; the local rank prefers the launcher's variable so that it
    matches the launcher's GPU binding.
    """
    node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.rank)
    lrank, lsize = node.rank, node.size
    for var in LOCAL_RANK_VARS:
        value = os.environ.get(var, "")
        if value.isdigit():
            lrank = int(value)
            break
    # number the nodes by their lowest global rank
    leader = node.allreduce(comm.rank, op=MPI.MIN)
    leaders = sorted(set(comm.allgather(leader)))
    node.Free()
    return lrank, lsize, leaders.index(leader)


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
