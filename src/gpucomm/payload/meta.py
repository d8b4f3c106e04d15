"""The run's meta: what the JSON file's ``meta`` (one per method of a launch) says of the run
that is the same for every size: the operation and method, where the ranks ran, the MPI, the
guard's nominal limit, the timer and timed loop, and where the launch's seconds went."""

import os
import time

from .. import __version__
from ..contract import TIMED_LOOP, TIMED_LOOP_NOTE
from .context import NO_DEVICE
from .topology import NOMINAL_LINKS, placement_of

#: the guard's source where it has no limit
NO_LIMIT = "none"


def process_age_s():
    """Seconds since this process started (Linux /proc; None elsewhere): the launcher's, the
    interpreter's and the imports' share of a launch, in the first method's meta."""
    try:
        with open("/proc/self/stat") as fp:
            start_ticks = float(fp.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as fp:
            uptime = float(fp.read().split()[0])
        return round(uptime - start_ticks / os.sysconf("SC_CLK_TCK"), 2)
    except (OSError, ValueError, IndexError):
        return None


def nominal_limit(cfg, method, ctx, op):
    """Collective: the guard's limit (GB/s, None for none) and where it came from, the same on
    every rank: --max-bandwidth, else rank 0's GPU's nominal figure of the link that bounds the
    method (Method.nominal_link), times the operation's parallel links."""
    if cfg.max_bandwidth is not None:
        return (cfg.max_bandwidth or None), "--max-bandwidth"
    backend, links = ctx.backend, op.parallel_links
    limit, source = None, NO_LIMIT
    bus = backend.pci_bus_id() if backend.is_device and ctx.rank == 0 and not backend.is_hip else None
    if bus is not None:
        figure, source = NOMINAL_LINKS[method.nominal_link]
        limit = figure(bus)
        if limit and links > 1:
            limit, source = limit * links, f"{source} x {links} pairs"
    return ctx.comm.bcast((limit, source if limit else NO_LIMIT), root=0)


def timed_loop_fields(method):
    """The MPI methods' timed loop (contract.TIMED_LOOP) and why not the compiled one
    (TIMED_LOOP_NOTE), where the method has them: in the meta and in every record."""
    fields = ((TIMED_LOOP, method.timed_loop), (TIMED_LOOP_NOTE, method.timed_loop_note))
    return {key: value for key, value in fields if value}


def run_meta(cfg, ctx, method, op, timer, graph, limit, age, t_setup):
    """The meta of one method's run; ``limit`` is nominal_limit's (GB/s, source), ``age``
    process_age_s() when the method's set-up began (rank 0), ``t_setup`` its perf_counter."""
    mpi = ctx.MPI.Get_library_version().split(",")[0].strip().strip("\x00")
    meta = {"op": cfg.op, "method": cfg.method, "backend": ctx.device["backend"], "nranks": ctx.nranks,
            **node_meta(ctx.placement, ctx.node_of, cfg.ranks_per_node),
            "devices": [p.device for p in ctx.placement], "device_name": ctx.device.get("name", NO_DEVICE),
            "mpi": mpi, "gpucomm": __version__,
            **{key: ctx.device[key] for key in ("driver", "runtime")
               if ctx.device.get(key) is not None}, "nominal_GBps": limit[0], "nominal_source": limit[1],
            "graph": graph, "timer": timer.name, "mpi_requests": method.request_style,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            # where a launch's seconds go: the process's age when this method began its set-up
            # (rank 0), and the set-up (backend, method, buffers) until its first size
            "process_age_s": age,
            "setup_s": round(time.perf_counter() - t_setup, 3)}
    meta.update(timed_loop_fields(method))
    if method.gpu_aware_mpi is not None:
        meta["gpu_aware_mpi"] = method.gpu_aware_mpi
    if method.peer_sync:
        meta["peer_sync"] = method.peer_sync
    meta.update(method.meta())
    meta.update(op.meta())
    return meta


def node_meta(placement, node_of, emulated):
    """What the meta says of the nodes: every rank's host and node, the (emulated) node names,
    and how far the physical nodes are apart on the network (topology.placement_of)."""
    hosts = [p.host for p in placement]
    host_of_node = {}
    for rank, node in enumerate(node_of):
        host_of_node.setdefault(node, hosts[rank])
    first = {}
    for p in placement:
        first.setdefault(p.host_node, p)
    physical = [first[n] for n in sorted(first)]
    distance, source = placement_of([p.topology_addr for p in physical])
    return {"nodes": len(host_of_node), "physical_nodes": len(physical), "hosts": hosts,
            "node_of_rank": list(node_of),
            "node_names": [host_of_node[n] for n in sorted(host_of_node)],
            "emulated_ranks_per_node": emulated or None,
            "placement": {"hosts": [p.host for p in physical],
                          "topology_addr": [p.topology_addr for p in physical],
                          "xname": [p.xname for p in physical], "distance": distance, "source": source}}
