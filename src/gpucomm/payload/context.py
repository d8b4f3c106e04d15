"""The run context: what the engine, the method and the operation of one run share.

``locate`` finds, once per launch, where this rank runs (its node-local rank and its node);
``make_context`` builds, once per method, the ``Context`` every method and operation receive:
the communicator, the backend, the run's options they read, and the placement of every rank
(one allgather, on which the shared-GPU check runs).  Three fields are the engine's to fill
later in its set-up, in this order: ``comm_peers`` once the operation exists (before the
buffers: a method's allocator may map the peers), then ``sendbuf`` and ``recvbuf``.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any, List, NamedTuple, Optional

from ..errors import GpucommError, collective
from .backend import Backend
from .topology import cray_xname, emulated_nodes, local_rank, topology_addr

#: the device name of a rank that drives none (Placement.device)
NO_DEVICE = "host"


@dataclass(frozen=True)
class Locality:
    """Where this rank runs, found once per launch (``locate``)."""

    local_rank: int                  # rank among the ranks of its host (the launcher's, if set)
    local_size: int                  # ranks on its host
    host_node: int                   # index of its host (its MPI shared-memory domain)
    emulated_node_of: Optional[List[int]]  # --ranks-per-node K: every rank's group; else None


class Placement(NamedTuple):
    """One rank's place, as every rank sees it (Context.placement)."""

    host: str                        # host name
    host_node: int                   # Locality.host_node
    device: str                      # the GPU's PCI bus id, or NO_DEVICE
    topology_addr: Any               # the network position of the host (topology.topology_addr)
    xname: Any                       # its Cray xname (topology.cray_xname), or None


@dataclass
class Context:
    """What the engine, the method and the operation of one run share (``make_context``)."""

    comm: Any                        # the run's communicator (MPI.COMM_WORLD)
    MPI: Any                         # mpi4py's MPI module
    backend: Backend                 # the array backend (backend.NumpyBackend, CupyBackend)
    device: dict                     # backend.describe(): backend, device, pci_bus_id, name
    op_name: str                     # the operation (constants.OPERATIONS)
    window: Optional[int]            # --window: bw's messages per window (None: its default)
    loop: str                        # --loop: the MPI methods' timed loop (constants.LOOP_CHOICES)
    op_args: dict                    # the operation's own options (the aggressor's --duration ...)
    rank: int                        # comm.rank
    nranks: int                      # comm.size
    local_rank: int                  # Locality.local_rank
    local_size: int                  # Locality.local_size
    host_node: int                   # Locality.host_node
    placement: List[Placement]       # every rank's Placement, in rank order
    host_node_of: List[int]          # every rank's host node (physical)
    node_of: List[int]               # every rank's node: emulated (--ranks-per-node), else its host's
    node: int                        # this rank's node (node_of[rank])
    #: the ranks the operation exchanges data with (Operation.peers()); filled by the engine
    comm_peers: Optional[List[int]] = None
    #: the send and receive buffers (the method's allocate(), else the backend's); by the engine
    sendbuf: Any = None
    recvbuf: Any = None

    def peers(self) -> list[int]:
        """Every other rank."""
        return [r for r in range(self.nranks) if r != self.rank]

    def same_host(self, rank: int) -> bool:
        """Whether ``rank`` runs on this rank's physical node (shared memory, GPU peer access)."""
        return self.host_node_of[rank] == self.host_node


def locate(comm: Any, MPI: Any, ranks_per_node: int | None = None) -> Locality:
    """Collective: this rank's Locality.  Its node is its MPI shared-memory domain (its host), or
    with ``ranks_per_node`` K its group of K consecutive ranks (a multi-node run emulated on one
    machine); K must divide the ranks into whole nodes."""
    lrank, lsize, host_node = local_rank(comm, MPI)
    node_of = None
    if ranks_per_node:
        node_of = emulated_nodes(comm.size, ranks_per_node)
        if node_of is None:
            raise collective(GpucommError(f"--ranks-per-node {ranks_per_node} does not divide "
                                          f"the {comm.size} ranks into whole nodes"))
    return Locality(lrank, lsize, host_node, node_of)


def make_context(cfg: Any, comm: Any, MPI: Any, backend: Backend, where: Locality) -> Context:
    """Collective: the Context of one method's run (``cfg``: the engine's RunConfig, ``where``:
    the launch's Locality).  Every rank's placement is gathered here; two ranks of one node
    driving one GPU are a collective error unless cfg.allow_shared_gpu."""
    device = backend.describe()
    host = socket.gethostname()
    placement = [Placement(*p) for p in comm.allgather(
        (host, where.host_node, device.get("pci_bus_id", NO_DEVICE), topology_addr(host), cray_xname()))]
    if backend.is_device and not cfg.allow_shared_gpu:
        _check_unshared(placement)
    host_node_of = [p.host_node for p in placement]
    node_of = where.emulated_node_of or host_node_of
    return Context(comm=comm, MPI=MPI, backend=backend, device=device, op_name=cfg.op,
                   window=cfg.window, loop=cfg.loop, op_args=cfg.op_args or {},
                   rank=comm.rank, nranks=comm.size, local_rank=where.local_rank,
                   local_size=where.local_size, host_node=where.host_node, placement=placement,
                   host_node_of=host_node_of, node_of=node_of, node=node_of[comm.rank])


def _check_unshared(placement: list[Placement]) -> None:
    """A collective GpucommError if two ranks of one node drive the same GPU."""
    seen: dict[tuple[int, str], int] = {}
    for r, p in enumerate(placement):
        key = (p.host_node, p.device)
        if key in seen:
            raise collective(GpucommError(
                f"ranks {seen[key]} and {r} both drive GPU {p.device} on {p.host}: "
                "fix the GPU binding (or pass --allow-shared-gpu)"))
        seen[key] = r
