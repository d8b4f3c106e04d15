"""The network path of one node, per NIC: two ranks on one node, one GPU each, with the
intra-node shortcuts off, so that their traffic leaves through one NIC and comes back; every NIC
of a node is tested without a second node (as CSCS's cxi loopback test and SuperBench's
``NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1`` do).

The partition names its NICs in ``extras['nics']`` = {"fabric": "ib" | "cxi" | "socket",
"devices": [...]}; test case ``nic=i`` (a parameter: the node's i-th device, skipped where the
node has fewer) pins both ranks to that device:

* ccl: ``NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1`` (NCCL's environment documentation) and the
  device: InfiniBand ``NCCL_IB_HCA==<hca>`` (the leading ``=``: that name exactly), Slingshot
  ``FI_CXI_DEVICE_NAME=<cxi>`` (libfabric's fi_cxi(7): "Restrict CXI provider to specific CXI
  devices"; aws-ofi-nccl opens its domains through libfabric), sockets
  ``NCCL_SOCKET_IFNAME==<interface>`` with ``NCCL_NET=Socket``;
* gpu-aware-mpi: UCX without its intra-node transports, ``UCX_TLS`` without ``sm`` and
  ``cuda_ipc`` (``rc,cuda_copy`` on InfiniBand, ``tcp,cuda_copy`` on sockets) and
  ``UCX_NET_DEVICES=<device>`` (UCX's FAQ / ``ucx_info -c``); on Slingshot (HPE Cray MPICH
  over libfabric) ``MPIR_CVAR_NOLOCAL=1`` (MPICH's CVAR, alias MPICH_NO_LOCAL: every rank
  treated as on another node) with ``FI_CXI_DEVICE_NAME``.

Each NIC is driven from the GPU(s) nearest to it: ``extras['nics']["gpus"]``, one list per
device (the site's documented GPU-NIC map, cited in its config), gives both ranks' GPUs through
the binding table (config/bin/gpucomm-bind); where one GPU is nearest, both ranks use it, and
for ccl each rank gets its own ``NCCL_HOSTID`` (NCCL refuses two ranks of one host on one GPU,
"Duplicate GPU detected"; with their own host hash they connect as two hosts do: over the
network).  A partition without the map drives every NIC from GPUs 0 and 1 and says so.

The job asks for every GPU of the node (the ranks' GPUs are numbered on the whole node, and
Slurm confines a job to the GPUs it asked for: ``--gpus-per-node=2`` gives GPUs 0 and 1 and
none of NIC 3's), and each rank's CPU binding is its GPU's entry of the partition's
``--cpu-bind=map_cpu:``/``mask_cpu:`` list (the entry of the local rank that the per-task table
gives that GPU): on Alps core 72 i + 1 for GPU i, on LUMI the CCD mask of the GCD.  A second
rank on a one-core entry takes the next core of its GPU's CPU (``extras['gpu_cores']``), never
the first rank's core nor another GPU's.  A partition whose binding names no per-GPU entry
(Leonardo: ``--cpus-per-task=8 --cpu-bind=cores``) keeps it.

The proof that the shortcut was off is NCCL's own word: with ``NCCL_DEBUG=INFO`` every channel
connection is logged with its transport (contract.nccl_channels), and the check fails where any
went P2P or SHM, or none went over the network at all.  UCX and MPICH print no such line by
default: the MPI case rests on its environment, and its description says so.

References: none from outside.  CSCS's cxi_gpu_loopback_bw minimum (187 Gb/s -2 % per NIC,
eth-cscs/cscs-reframe-tests checks/system/network/cxi_gpu_loopback_bw.py) judges raw RDMA writes
of 512 KiB by the cxi tool on Alps, not NCCL's or MPICH's bandwidth, so it judges nothing here:
the check passes on its proof and says "no reference yet" until the first healthy runs make one
(``gpucomm tolerances``, docs/sites/*.md's bring-up).
"""

import glob
import os

import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_before, variable
from reframe.core.exceptions import ReframeError, SanityError

from ..constants import BW, CCL, GPU_AWARE_MPI, Extras
from ..contract import BW_PERF_POINTS, nccl_channels
from ..site.siteconf import BIND_PREFIX
from .base import GpucommCheck
from .mixins import NCCL_DEBUG_FILE, NCCL_DEBUG_GLOB, method_env

#: the most NICs a node has among the sites (one test case per index; a node with fewer
#: skips the rest)
MAX_NICS = 8
#: the shortcuts NCCL takes inside a node, off (NCCL's environment variables documentation)
NCCL_SHORTCUTS_OFF = {"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1", "NCCL_DEBUG": "INFO",
                      "NCCL_DEBUG_FILE": NCCL_DEBUG_FILE}
#: fabric -> method -> the variables that pin the traffic to one device ({nic}: its name)
FABRICS = {
    "ib": {CCL: {"NCCL_IB_HCA": "={nic}"},
           GPU_AWARE_MPI: {"UCX_TLS": "rc,cuda_copy", "UCX_NET_DEVICES": "{nic}:1"}},
    "cxi": {CCL: {"FI_CXI_DEVICE_NAME": "{nic}"},
            GPU_AWARE_MPI: {"FI_CXI_DEVICE_NAME": "{nic}", "MPIR_CVAR_NOLOCAL": "1"}},
    "socket": {CCL: {"NCCL_NET": "Socket", "NCCL_SOCKET_IFNAME": "={nic}"},
               GPU_AWARE_MPI: {"UCX_TLS": "tcp,cuda_copy", "UCX_NET_DEVICES": "{nic}"}},
}
#: fabric -> the transport NCCL must name for every channel (aws-ofi-nccl's plugin name differs
#: between versions: any NET/ transport on cxi)
NET_TRANSPORT = {"ib": "NET/IB", "cxi": "NET/", "socket": "NET/Socket"}
#: the host identities of the two ranks where they share one GPU (ccl: NCCL_HOSTID per rank)
HOST_IDS = "gpucomm-nicpath-0,gpucomm-nicpath-1"
#: the perf points: time per message at 8 B, goodput where the window streams
NIC_PERF_POINTS = {k: BW_PERF_POINTS[k] for k in ("msgtime_8B", "goodput_64MiB")}


#: the launcher's per-task CPU binding lists (srun --cpu-bind=TYPE:LIST, one entry per local rank)
CPU_BIND_LISTS = ("map_cpu", "mask_cpu")


def cpu_bind_list(options):
    """(type, [entry per local rank]) of the ``--cpu-bind=map_cpu:``/``mask_cpu:`` option among
    launcher ``options``, or None where there is none."""
    for option in options:
        if str(option).startswith("--cpu-bind="):
            kind, _, values = str(option).split("=", 1)[1].partition(":")
            if kind in CPU_BIND_LISTS and values:
                return kind, values.split(",")
    return None


def mask_cores(mask):
    """The cores of a hexadecimal CPU mask (srun's mask_cpu entry, '0x' optional)."""
    value = int(mask, 16)
    return [core for core in range(value.bit_length()) if value >> core & 1]


def spare_core(entry, cores, taken):
    """The first of ``cores`` (a GPU's CPU) after core ``entry``, then before it, that no rank
    has ``taken``; None where every one is."""
    ordered = sorted(cores)
    later = [c for c in ordered if c > entry] + [c for c in ordered if c < entry]
    return next((c for c in later if str(c) not in taken), None)


@sn.deferrable
def network_path_ok(log_glob, expected):
    """True if every channel connection in the NCCL debug logs went over ``expected`` (a
    transport prefix, e.g. NET/IB); else a SanityError naming the channels that did not."""
    paths = sorted(glob.glob(log_glob))
    if not paths:
        raise SanityError(f"no NCCL debug log ({log_glob}): cannot tell which path NCCL took")
    channels = []
    for path in paths:
        with open(path, errors="replace") as fp:
            channels += nccl_channels(fp.read())
    if not channels:
        raise SanityError(f"no channel connection in the NCCL debug logs ({log_glob}, NCCL_DEBUG=INFO)")
    bad = [c for c in channels if not c["transport"].startswith(expected)]
    if bad:
        shown = ", ".join(f"channel {c['channel']} {c['src']}->{c['dst']} via {c['transport']}"
                          for c in bad[:4])
        raise SanityError(f"{len(bad)} of {len(channels)} NCCL channels did not go over {expected}: "
                          f"{shown} (the intra-node shortcut was not off)")
    return True


class NicPathBase(GpucommCheck):
    """Two ranks of one node through one NIC (module docstring).  Subclasses set a ``method``
    parameter (ccl, gpu-aware-mpi)."""

    op = BW
    #: the node's i-th NIC of extras['nics'] (a parameter: one test case per NIC)
    nic = parameter(range(MAX_NICS))
    sizes = "8,1M,64M"
    window = 8  # as checks/bw.py
    perf_points = NIC_PERF_POINTS
    #: -S nics=a,b: the devices where the partition names none (a local machine: lo)
    nics = variable(str, value="")
    #: -S fabric=...: with -S nics, the fabric (ib, cxi, socket)
    fabric = variable(str, value="socket")
    tags = {"gpucomm", "nicpath"}

    def nic_config(self):
        """(fabric, devices) of this partition: -S nics, else extras['nics'], else (None, [])."""
        if self.nics:
            return self.fabric, [d.strip() for d in self.nics.split(",") if d.strip()]
        conf = self.current_partition.extras.get(Extras.NICS) or {}
        return conf.get("fabric"), list(conf.get("devices", []))

    @property
    def device(self):
        devices = self.nic_config()[1]
        return devices[self.nic] if self.nic < len(devices) else None

    def nearest_gpus(self):
        """The GPUs of this test case's NIC (extras['nics']["gpus"]), or None where unknown."""
        if self.nics:
            return None
        conf = self.current_partition.extras.get(Extras.NICS) or {}
        gpus = conf.get("gpus") or []
        return list(gpus[self.nic]) if self.nic < len(gpus) and gpus[self.nic] else None

    def rank_gpus(self):
        """The two ranks' GPUs: the NIC's nearest (one GPU twice where one is nearest), else 0, 1."""
        gpus = self.nearest_gpus()
        return (gpus * 2)[:2] if gpus else [0, 1]

    def check_variables(self):
        super().check_variables()
        fabric = self.nic_config()[0]
        if fabric is not None and fabric not in FABRICS:
            raise ReframeError(f"NIC fabric {fabric!r}: choose {', '.join(FABRICS)}")

    def skip_reason(self):
        fabric, devices = self.nic_config()
        if not devices:
            return (f"partition {self.current_partition.fullname} names no NICs "
                    f"(extras['{Extras.NICS}'], or -S nics=... -S fabric=...)")
        if self.nic >= len(devices):
            return f"the node has {len(devices)} NIC(s): {', '.join(devices)}"
        if self.method not in FABRICS[fabric]:
            return f"{self.method} has no per-NIC path on {fabric}"
        return super().skip_reason()

    def set_tasks(self):
        super().set_tasks()
        self.num_tasks = self.num_tasks_per_node = 2  # two ranks of one node, one GPU each

    def request_gpus(self):
        """Every GPU of the node (module docstring): the ranks' GPUs are the node's numbers."""
        if self.gpu_method:
            self.num_gpus_per_node = max(self.gpus_per_node(), max(self.rank_gpus()) + 1)

    def gpu_table(self):
        """The GPU of each local rank in the partition's per-task table (GPUCOMM_BIND_*_VISIBLE_
        DEVICES of this method), else local rank i on GPU i."""
        for var, value in method_env(self.current_partition.extras, self.method).items():
            if var.startswith(BIND_PREFIX) and var.endswith("_VISIBLE_DEVICES"):
                return [int(v) for v in value.split(",")]
        return list(range(max(self.gpus_per_node(), 2)))

    def rank_cpus(self):
        """(type, [each rank's entry]): each rank's CPU binding, its GPU's entry of the
        partition's --cpu-bind list (module docstring); None where that binding has no per-GPU
        entry or a rank's GPU has none."""
        found = cpu_bind_list(super().site_launcher_options())
        if not found:
            return None
        kind, entries = found
        table, cores = self.gpu_table(), self.current_partition.extras.get(Extras.GPU_CORES) or []
        taken = []
        for gpu in self.rank_gpus():
            if gpu not in table or table.index(gpu) >= len(entries):
                return None
            entry = entries[table.index(gpu)]
            if kind == "map_cpu" and entry in taken and gpu < len(cores):
                spare = spare_core(int(entry), cores[gpu], taken)
                entry = entry if spare is None else str(spare)
            taken.append(entry)
        return kind, taken

    def site_launcher_options(self):
        """The partition's launcher options with each rank's CPU binding (rank_cpus) in place of
        the per-local-rank list."""
        opts = super().site_launcher_options()
        bound = self.rank_cpus()
        if not bound:
            return opts
        option = f"--cpu-bind={bound[0]}:{','.join(bound[1])}"
        return [option if str(o).startswith("--cpu-bind=") else o for o in opts]

    def bandwidth_limit(self):
        """The payload's guard: the node's network (one NIC carries at most all of it)."""
        return self.current_partition.extras.get(Extras.NETWORK_BANDWIDTH) or super().bandwidth_limit()

    def ranks_text(self):
        gpus = self.rank_gpus()
        where = "nearest" if self.nearest_gpus() else "GPU-NIC map not configured"
        bound = self.rank_cpus()
        cores = f", CPU {bound[0]} {','.join(bound[1])}" if bound else ""
        return (f"2 ranks of one node through NIC {self.device or '?'}, on GPU "
                f"{' and '.join(map(str, sorted(set(gpus))))} ({where}){cores}")

    def pinned(self, method):
        """The variables that pin ``method``'s traffic to this test case's NIC."""
        fabric = self.nic_config()[0]
        if not self.device or fabric not in FABRICS:
            return {}
        env = {k: v.format(nic=self.device) for k, v in FABRICS[fabric].get(method, {}).items()}
        return dict(env, **NCCL_SHORTCUTS_OFF) if method == CCL else env

    def env_of(self, method):
        return dict(super().env_of(method), **self.pinned(method))

    @run_before("run")
    def pin_per_rank_bindings(self):
        """A site's per-rank table (config/bin/gpucomm-bind's GPUCOMM_BIND_<VAR>, e.g. one HCA
        per local rank) would give each rank its own NIC: both ranks get the pinned one."""
        for var, value in self.pinned(self.method).items():
            if f"GPUCOMM_BIND_{var}" in self.env_vars:
                self.env_vars[f"GPUCOMM_BIND_{var}"] = value
        # both ranks on the NIC's nearest GPU(s): the partition's per-task GPU table
        gpus = self.rank_gpus()
        for var in [v for v in self.env_vars if v.startswith("GPUCOMM_BIND_") and v.endswith("VISIBLE_DEVICES")]:
            self.env_vars[var] = ",".join(map(str, gpus))
        if self.method == CCL and len(set(gpus)) == 1:
            self.env_vars["GPUCOMM_BIND_NCCL_HOSTID"] = HOST_IDS

    def description(self):
        what = "the NCCL log proves every channel went over the network" if self.method == CCL else \
            "the environment turns the intra-node transports off (no log proof)"
        return f"{self.op} with {self.method} through one NIC, intra-node shortcuts off: {what}"

    def sanity_steps(self, run_ok):
        steps = super().sanity_steps(run_ok)
        fabric = self.nic_config()[0]
        if self.method == CCL and fabric in NET_TRANSPORT:
            steps.append(network_path_ok(os.path.join(self.stagedir, NCCL_DEBUG_GLOB), NET_TRANSPORT[fabric]))
        return steps


__all__ = ["NicPathBase", "cpu_bind_list", "mask_cores", "network_path_ok", "spare_core"]
