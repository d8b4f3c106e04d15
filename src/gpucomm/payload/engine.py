"""The payload engine: one timing loop, warm-up, validation, statistics and output for every
(operation, method) pair."""

import os
import socket
import time
from dataclasses import dataclass, replace
from typing import List, Optional

import numpy as np

from .. import __version__
from ..constants import LOOP_AUTO
from ..contract import TIMED_LOOP, TIMED_LOOP_NOTE
from .backend import make_backend
from ..errors import CapabilityError, GpucommError, PlausibilityError, ValidationError, collective
from ..metrics import time_stats_us
from .methods import get_method
from .ops import get_operation
from .timers import make_timer
from .faults import check_requests, corruption_request, hang_exits, hang_request
from .output import Output
from .watchdog import Watchdog
from .topology import (cray_xname, emulated_nodes, local_rank, nominal_gpu_link_GBps,
                       nominal_pcie_GBps, placement_of, topology_addr)

@dataclass
class RunConfig:
    op: str
    method: str
    sizes: List[int]
    iters: Optional[int] = None      # None: by size, see default_iters
    warmup: Optional[int] = None     # None: a tenth of iters, at least 2
    batch: Optional[int] = None      # iterations per timed sample; None: by size, see default_batch
    graph: str = "auto"              # auto, on, off: the timed loop as one CUDA/HIP graph
    budget: Optional[float] = None   # seconds of timed iterations per size: fewer where slow
    backend: str = "auto"
    json_path: Optional[str] = None
    max_bandwidth: Optional[float] = None  # GB/s; None: detect; 0: no guard
    allow_shared_gpu: bool = False
    timer: str = "auto"              # auto, host, device (see timers.py)
    timeout: Optional[float] = None  # seconds; the watchdog ends a run that outlives it
    ranks_per_node: Optional[int] = None  # emulate nodes: groups of K consecutive ranks
    window: Optional[int] = None     # bw: messages per window (None: the operation's default)
    loop: str = LOOP_AUTO            # the MPI methods' timed loop: auto, numba-mpi, mpi4py (fastloop)
    op_args: Optional[dict] = None   # an operation's own options (the aggressor's --duration ...)
    quiet: bool = False
    sweep: bool = False              # one of several methods of one launch (set by run())


def default_iters(size):
    """Iterations per size: many for latency-bound sizes, fewer where one iteration is long."""
    if size <= 64 << 10:
        return 1000
    if size <= 1 << 20:
        return 200
    if size <= 64 << 20:
        return 50
    return 20


def default_batch(size, iters):
    """Iterations per timed sample.  Small messages run back to back between two barriers, as
    OSU and nccl-tests time their loops: a barrier's skew (ranks leave it up to a microsecond
    apart) and the timer's own cost are paid once per sample instead of once per iteration.
    Large messages run a few per sample too: a barrier, a stream synchronisation and the timer
    in every sample cost about 7 us, 4 % of a 64 MiB NVLink transfer (the results README has
    the measurement).  At least 10 samples remain for the spread."""
    batch = 20 if size <= 64 << 10 else 4 if size <= 1 << 20 else 5
    return max(1, min(batch, iters // 10))


def budget_iters(iters, budget, warm_s):
    """Iterations that fit a time budget (the last warm-up iteration, slowest rank, as the
    estimate), between 10 (for a spread) and ``iters``; the same on every rank."""
    if warm_s <= 0:
        return iters
    return max(min(10, iters), min(iters, int(budget / warm_s)))


#: samples a size keeps however far past its budget (the spread needs a few)
BUDGET_MIN_SAMPLES = 10


def budget_spent(comm, t_start, budget, done):
    """Whether the timed samples of a size have used up their budget, which the warm-up's
    estimate (budget_iters) cannot promise: a link that congests after the warm-up slows every
    later iteration.  Asked between samples, outside the timed region; any rank's clock past
    the budget ends the size on every rank."""
    if not budget or done < BUDGET_MIN_SAMPLES:
        return False
    return comm.allreduce(int(time.perf_counter() - t_start > budget)) > 0  # default op: sum


class Context:
    """What methods and operations share: communicator, backend, buffers, placement."""

    def __init__(self, comm, MPI, backend):
        self.comm, self.MPI, self.backend = comm, MPI, backend
        self.rank, self.nranks = comm.rank, comm.size
        self.sendbuf = self.recvbuf = None

    def peers(self):
        return [r for r in range(self.nranks) if r != self.rank]

    def same_host(self, rank):
        """Whether ``rank`` runs on this rank's physical node (shared memory, GPU peer access)."""
        return self.host_node_of[rank] == self.host_node


def agree(comm, error):
    """Collective: every rank raises the first rank's error (None everywhere: return)."""
    errors = comm.allgather(None if error is None else (type(error).__name__, str(error)))
    for rank, item in enumerate(errors):
        if item is not None:
            cls = {"CapabilityError": CapabilityError, "ValidationError": ValidationError,
                   "PlausibilityError": PlausibilityError}.get(item[0], GpucommError)
            raise collective(cls(item[1] if item[1].startswith("rank ") else f"rank {rank}: {item[1]}"))


def _collective(fn, comm):
    """Run fn() on every rank; if any rank fails with a GpucommError, all ranks raise it."""
    try:
        value, error = fn(), None
    except GpucommError as exc:
        if getattr(exc, "collective", False):
            raise
        value, error = None, exc
    agree(comm, error)
    return value


def _choose_backend(cfg, method_cls):
    if cfg.backend == "auto":
        return method_cls.backends[0]
    if cfg.backend not in method_cls.backends:
        raise collective(GpucommError(f"method {cfg.method} cannot use the {cfg.backend} backend "
                                      f"(supported: {', '.join(method_cls.backends)})"))
    return cfg.backend


def _nominal_limit(cfg, method, backend, ctx, op):
    """The guard's limit (GB/s, None for none) and where it came from; same on every rank."""
    if cfg.max_bandwidth is not None:
        return (cfg.max_bandwidth or None), "--max-bandwidth"
    links = op.parallel_links
    limit, source = None, "none"
    if backend.is_device and ctx.rank == 0 and hasattr(backend, "pci_bus_id") and not backend.is_hip:
        if method == "staging":
            limit, source = nominal_pcie_GBps(backend.pci_bus_id()), "nvidia-smi PCIe link"
        else:
            limit, source = nominal_gpu_link_GBps(backend.pci_bus_id()), "nvidia-smi nvlink/PCIe"
        if limit and links > 1:
            limit, source = limit * links, f"{source} x {links} pairs"
    return ctx.comm.bcast((limit, source if limit else "none"), root=0)


def run(cfg):
    """Run one operation over cfg.sizes with one method, or with several in turn (cfg.method
    'a,b,c': one launch for a sweep; a method this machine cannot do is skipped with its reason
    and the others run); returns 0 or raises GpucommError."""
    try:
        from mpi4py import MPI
    except Exception as exc:  # ImportError, RuntimeError: no libmpi found
        raise GpucommError(f"mpi4py cannot load an MPI library ({exc}); install one "
                           "(pip install gpucomm[mpi]) or load the site's MPI module") from None
    comm = MPI.COMM_WORLD
    methods = cfg.method.split(",")
    dog = Watchdog(cfg.timeout, comm.rank, cfg.op).start()
    op_cls = get_operation(cfg.op)
    for name in methods:
        get_method(name)
    msg = op_cls.check_ranks(comm.size)
    if msg:
        raise collective(GpucommError(msg))
    op_cls.check_sizes(cfg.sizes)
    check_requests(comm.size, cfg.sizes)
    if cfg.json_path:  # before the first size: a path that cannot be written is bad input now
        _collective(lambda: _writable(cfg.json_path) if comm.rank == 0 else None, comm)

    # the node of a rank: its MPI shared-memory domain (its host), or with --ranks-per-node K
    # its group of K consecutive ranks (a multi-node run emulated on one machine)
    lrank, lsize, host_node = local_rank(comm, MPI)
    node_of = None
    if cfg.ranks_per_node:
        node_of = emulated_nodes(comm.size, cfg.ranks_per_node)
        if node_of is None:
            raise collective(GpucommError(f"--ranks-per-node {cfg.ranks_per_node} does not divide "
                                          f"the {comm.size} ranks into whole nodes"))
    out = Output(cfg, comm.rank == 0)
    status = {}
    try:
        for name in methods:
            one = replace(cfg, method=name, sweep=len(methods) > 1)
            try:
                _run_method(one, comm, MPI, (lrank, lsize, host_node, node_of), out, dog)
            except CapabilityError as exc:
                if len(methods) == 1 or not getattr(exc, "collective", False):
                    raise
                status[name] = f"skipped: {exc}"
                out.note(f"{name}: skipped: {exc}")
            else:
                status[name] = "ok"
    except GpucommError as exc:
        status.setdefault(name, f"failed: {exc}")
        out.done(False, str(exc), status)
        raise
    finally:
        dog.cancel()
    out.done(True, status=status)
    return 0


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


def _run_method(cfg, comm, MPI, where, out, dog):
    """One method's run of the operation over every size (and case)."""
    t_setup, age = time.perf_counter(), process_age_s() if not out.metas else None
    lrank, lsize, host_node, node_of = where
    op_cls = get_operation(cfg.op)
    method_cls = get_method(cfg.method)
    backend_name = _choose_backend(cfg, method_cls)
    dog.what = f"{cfg.op}/{cfg.method}"
    backend = _collective(lambda: make_backend(backend_name, lrank), comm)
    ctx = Context(comm, MPI, backend)
    ctx.op_name = cfg.op
    ctx.window = cfg.window
    ctx.loop = cfg.loop
    ctx.op_args = cfg.op_args or {}
    ctx.local_rank, ctx.local_size, ctx.host_node = lrank, lsize, host_node

    # placement: which device each rank drives; two ranks of one node on one GPU is an error
    desc = backend.describe()
    host = socket.gethostname()
    placement = comm.allgather((host, host_node, desc.get("pci_bus_id", "host"),
                                topology_addr(host), cray_xname()))
    ctx.host_node_of = [p[1] for p in placement]
    ctx.node_of = node_of or ctx.host_node_of
    ctx.node = ctx.node_of[comm.rank]
    if backend.is_device and not cfg.allow_shared_gpu:
        seen = {}
        for r, (host, nd, bus, _, _) in enumerate(placement):
            if (nd, bus) in seen:
                raise collective(GpucommError(
                    f"ranks {seen[(nd, bus)]} and {r} both drive GPU {bus} on {host}: "
                    "fix the GPU binding (or pass --allow-shared-gpu)"))
            seen[(nd, bus)] = r

    method = _collective(lambda: method_cls(ctx), comm)
    op = op_cls(ctx, method)
    ctx.comm_peers = op.peers()
    send_bytes, recv_bytes = op.buffer_bytes(max(cfg.sizes))
    _collective(lambda: _check_memory(backend, send_bytes + recv_bytes, lsize, max(cfg.sizes)), comm)
    if hasattr(method, "allocate"):  # the method's own memory (nvshmem: its symmetric heap)
        ctx.sendbuf, ctx.recvbuf = _collective(lambda: method.allocate(send_bytes, recv_bytes), comm)
    else:
        ctx.sendbuf = _collective(lambda: backend.empty(send_bytes), comm)
        ctx.recvbuf = _collective(lambda: backend.empty(recv_bytes), comm)
    _collective(lambda: method.setup(ctx.sendbuf, ctx.recvbuf), comm)

    timer_name = cfg.timer
    if cfg.sweep and not (backend.is_device and getattr(method, "device_timer", False)):
        timer_name = "host"  # in a sweep, --timer device applies where the method allows it
    timer = make_timer(timer_name, backend, method)
    use_graph = _graph_wanted(cfg, method, backend)
    limit, limit_source = _nominal_limit(cfg, cfg.method, backend, ctx, op)
    meta = {"op": cfg.op, "method": cfg.method, "backend": desc["backend"], "nranks": comm.size,
            **_node_meta(placement, ctx.node_of, cfg.ranks_per_node),
            "devices": [p[2] for p in placement], "device_name": desc.get("name", "host"),
            "mpi": MPI.Get_library_version().split(",")[0].strip().strip("\x00"), "gpucomm": __version__,
            "nominal_GBps": limit, "nominal_source": limit_source, "graph": use_graph, "timer": timer.name,
            "mpi_requests": getattr(method, "request_style", None),
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            # where a launch's seconds go: the process's age when this method began its set-up
            # (rank 0), and the set-up (backend, method, buffers) until its first size
            "process_age_s": age,
            "setup_s": round(time.perf_counter() - t_setup, 3)}
    # the MPI methods: which timed loop runs (compiled or mpi4py's) and why not the compiled one
    loop = {k: getattr(method, k) for k in (TIMED_LOOP, TIMED_LOOP_NOTE) if getattr(method, k, None)}
    meta.update(loop)
    if hasattr(method, "why"):
        meta["gpu_aware_mpi"] = method.why
    if getattr(method, "peer_sync", None):
        meta["peer_sync"] = method.peer_sync
    if hasattr(method, "meta"):
        meta.update(method.meta())
    meta.update(op.meta())
    out.begin(meta, op.case_label if op.has_cases else None)
    corrupt = corruption_request()
    hang = hang_request()

    graph = None
    try:
        for size, case in op.cases(cfg.sizes):
            op.select(case)
            t_size = time.perf_counter()
            iters = cfg.iters or getattr(op, "fixed_iters", None) or default_iters(size)
            warmup = cfg.warmup if cfg.warmup is not None else max(2, iters // 10)
            _collective(lambda: (op.prepare(size), method.prepare(size)), comm)
            warm = 0.0
            for i in range(warmup):  # untimed; the graph is captured after it (connections made)
                dog.where = f"size {size} B, warm-up iteration {i}"
                dog.waiting = "a barrier"
                comm.Barrier()
                dog.waiting = "an iteration's communication with its peers"
                t0 = time.perf_counter()
                op.step(size)
                method.sync()
                warm = time.perf_counter() - t0
                dog.waiting = None
            if cfg.budget and warmup:
                iters = budget_iters(iters, cfg.budget, comm.allreduce(warm, op=MPI.MAX))
            batch = min(cfg.batch, iters) if cfg.batch else default_batch(size, iters)
            samples = -(-iters // batch)
            graph = None
            if use_graph:
                graph, note = _capture(comm, backend, lambda: op.loop(size, batch))
                if graph is None:
                    if cfg.graph == "on":
                        raise collective(CapabilityError(f"--graph on: {note}"))
                    use_graph = meta["graph"] = False
                    out.note(f"CUDA graph capture failed ({note}): timing the plain loop")
                else:
                    graph.launch(backend.stream)  # untimed: the graph's first launch uploads it
                    method.sync()
            times = np.empty(samples, dtype=np.float64)
            t_timed = time.perf_counter()
            for i in range(samples):
                dog.where = f"size {size} B, sample {i} ({batch} iteration(s) each)"
                dog.waiting = "the other ranks' word on the time budget"
                if budget_spent(comm, t_timed, cfg.budget, i):
                    samples, times = i, times[:i]
                    break
                dog.waiting = None
                if hang == (comm.rank, size):  # test hook: this rank dies or stops answering
                    if hang_exits():
                        os._exit(9)
                    time.sleep(1e6)
                dog.waiting = "a barrier"
                comm.Barrier()
                dog.waiting = "the timed loop's communication with its peers"
                timer.start()
                if graph is not None:
                    graph.launch(backend.stream)
                else:
                    op.loop(size, batch)
                times[i] = timer.stop() / batch
                dog.waiting = None
            # a graph holds NCCL's captured work: ncclCommDestroy waits until every graph that
            # captured the communicator is gone, so none may outlive its size
            graphed, graph = graph is not None, None
            worst = op.reduce_times(times) * op.time_scale
            if corrupt and corrupt == (comm.rank, size):
                op.corrupt(size)
            _collective(lambda: _raise_if(op.validate(size), ValidationError), comm)
            stats = time_stats_us(worst)
            rec = {"op": cfg.op, "method": cfg.method, "size": size, "iters": samples * batch,
                   "batch": batch, "samples": samples, "warmup": warmup, "nranks": comm.size,
                   "time_us": stats, "validated": True, "graph": graphed,
                   "timer": timer.name, **loop, **case,
                   "wall_s": round(time.perf_counter() - t_size, 3)}
            if meta.get("peer_sync"):
                rec["peer_sync"] = meta["peer_sync"]
            rec.update(op.metrics(size, stats["median"] * 1e-6))
            best = op.metrics(size, stats["min"] * 1e-6)
            rec["goodput_GBps_best"] = best["goodput_GBps"]
            out.record(rec)
            if limit and best["busbw_GBps"] > limit:
                what = f"{cfg.op}/{cfg.method}" + (f" {op.case_label(case)}" if case else "")
                raise collective(PlausibilityError(
                    f"{what} at {size} B: {best['busbw_GBps']:.1f} GB/s (best sample) is "
                    f"above the link's nominal {limit:.1f} GB/s ({limit_source}): a measurement bug"))
    finally:
        graph = None  # before the method closes (see above)
        method.close()
    if out.enabled and not cfg.quiet:
        for line in op.summary([r for r in out.records if r["method"] == cfg.method]):
            print(line)


def _graph_wanted(cfg, method, backend):
    """Whether to time the loop as a CUDA/HIP graph: where the method's whole iteration is device
    work on the rank's stream (ccl); --graph on elsewhere is an error, auto falls back."""
    capable = backend.is_device and getattr(method, "graph_capable", False)
    if cfg.graph == "on" and not capable and not cfg.sweep:
        raise collective(GpucommError(
            f"--graph on: method {cfg.method} synchronises through the host in every iteration "
            f"(only ccl's iterations are all device work); use --graph auto or off"))
    return capable and cfg.graph != "off"


def _capture(comm, backend, steps):
    """Capture ``steps()`` into a graph on the backend's stream, on every rank: (graph, None),
    or (None, why) on every rank if any rank failed (nothing was launched: capture only records)."""
    graph, error = None, None
    try:
        graph = backend.capture(steps)
    except Exception as exc:  # CUDA/NCCL errors of any library type
        error = f"{type(exc).__name__}: {exc}"
    errors = [e for e in comm.allgather(error) if e]
    return (None, errors[0]) if errors else (graph, None)


def _node_meta(placement, node_of, emulated):
    """What the JSON meta says of the nodes: every rank's host and node, the (emulated) node
    names, and how far the physical nodes are apart on the network (topology.placement_of)."""
    hosts = [p[0] for p in placement]
    host_of_node = {}
    for rank, node in enumerate(node_of):
        host_of_node.setdefault(node, hosts[rank])
    first = {}
    for host, host_node, _, addr, xname in placement:
        first.setdefault(host_node, (host, addr, xname))
    physical = [first[n] for n in sorted(first)]
    distance, source = placement_of([p[1] for p in physical])
    return {"nodes": len(host_of_node), "physical_nodes": len(physical), "hosts": hosts,
            "node_of_rank": list(node_of),
            "node_names": [host_of_node[n] for n in sorted(host_of_node)],
            "emulated_ranks_per_node": emulated or None,
            "placement": {"hosts": [p[0] for p in physical],
                          "topology_addr": [p[1] for p in physical],
                          "xname": [p[2] for p in physical], "distance": distance, "source": source}}


def _writable(path):
    """Raise GpucommError unless ``path`` can be written (it is opened for appending and left
    as it was: the records are written at the end)."""
    if os.path.isdir(path):
        raise GpucommError(f"--json {path}: is a directory, not a file")
    existed = os.path.exists(path)
    try:
        with open(path, "a"):
            pass
    except OSError as exc:
        raise GpucommError(f"--json {path}: cannot write it ({exc.strerror})") from None
    if not existed:
        os.unlink(path)


def _check_memory(backend, need, local_ranks, largest):
    """Raise GpucommError if this rank's buffers for the largest size do not fit its memory."""
    free = backend.free_bytes(local_ranks)
    if free is not None and need > free:
        where = "its GPU" if backend.is_device else "the node's host memory (its share)"
        raise GpucommError(f"--sizes up to {largest} B needs {need / 2**30:.2f} GiB per rank, "
                           f"{where} has {free / 2**30:.2f} GiB free: choose smaller sizes")


def _raise_if(message, cls):
    if message:
        raise cls(message)
