"""The payload engine: one timing loop, warm-up, validation, statistics and output for every
(operation, method) pair.

``run`` checks the request, locates the ranks (``context.locate``) and runs each method in
turn: ``_set_up`` (backend, ``context.make_context``, the method, the operation, buffers,
timer, the meta of ``payload.meta``), then ``_measure`` per (size, case) of the operation:
warm-up, the timed samples, validation, the record and the guard.  The engine reads a method
and an operation only through what ``methods.base.Method`` and ``ops.base.Operation`` declare.
"""

import os
import sys
import time
from dataclasses import dataclass, replace
from typing import List, Optional

import numpy as np

from ..constants import (
    CCL,
    IPC_COPY,
    LOOP_AUTO,
    PRECISION_CAP_S,
    PRECISION_LATENCY_MAX,
    PRECISION_TARGET_BANDWIDTH,
    PRECISION_TARGET_LATENCY,
)
from ..contract import (
    CAPPED_AT,
    PREC_STOPPED,
    PRECISION_FIELD,
    SIZES_CAPPED,
    STOP_CAP,
    STOP_ITERS,
    STOP_TARGET,
    VALIDATE_EVERY,
)
from ..errors import CapabilityError, GpucommError, PlausibilityError, ValidationError, collective
from ..metrics import block_count, median_precision_us, rel_halfwidth, time_stats_us
from ..sizes import default_batch, default_iters, size_label
from .backend import make_backend
from .capabilities import check_environment
from .context import Context, locate, make_context
from .faults import (
    CORRUPT,
    CORRUPT_EVERY,
    busy_wait,
    check_fired,
    check_requests,
    corrupt_every_request,
    corruption_request,
    hang_exits,
    hang_request,
    slow_node_factor,
    slow_node_meta,
    slow_node_request,
)
from .meta import nominal_limit, process_age_s, run_meta, timed_loop_fields
from .methods import get_method
from .methods.base import Method
from .ops import get_operation
from .ops.base import Operation
from .output import Output
from .soak import Soak
from .timers import device_timed, make_timer
from .topology import env_rank
from .watchdog import StartupSentinel, Watchdog


@dataclass
class RunConfig:
    """A launch's options (payload.cli builds them from the command line)."""

    op: str
    method: str
    sizes: List[int]
    iters: Optional[int] = None      # None: by size, see default_iters
    warmup: Optional[int] = None     # None: a tenth of iters, at least 2
    batch: Optional[int] = None      # iterations per timed sample; None: by size, see default_batch
    graph: str = "auto"              # auto, on, off: the timed loop as one CUDA/HIP graph
    budget: Optional[float] = None   # seconds of timed iterations per size: fewer where slow
    precision_target: Optional[float] = None  # the median's relative 95 % half-width to sample to
    #                                  (None: by size, precision_target; 0: off, the iterations only)
    backend: str = "auto"
    json_path: Optional[str] = None
    max_bandwidth: Optional[float] = None  # GB/s; None: detect; 0: no guard
    allow_shared_gpu: bool = False
    timer: str = "auto"              # auto, host, device (see timers.py)
    timeout: Optional[float] = None  # seconds; the watchdog ends a run that outlives it
    ranks_per_node: Optional[int] = None  # emulate nodes: groups of K consecutive ranks
    window: Optional[int] = None     # bw: messages per window (None: the operation's default)
    loop: str = LOOP_AUTO            # the MPI methods' timed loop: auto, numba-mpi, mpi4py (fastloop)
    op_args: Optional[dict] = None   # an operation's own options (the aggressor's --duration ...) and
    #                                  every option that is no field here, by name (payload.cli.run_config)
    validate_every: Optional[int] = None  # the soak: check the data of every sample holding a multiple of N
    validate_sizes: Optional[List[int]] = None  # ... at these sizes (None: every size)
    fit_memory: bool = False         # a default sweep: stop at the largest size that fits (_fit)
    quiet: bool = False
    sweep: bool = False              # one of several methods of one launch (set by run())


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


def precision_target(cfg, size, op):
    """The relative half-width of the median's 95 % interval a size is sampled to (0: none):
    --precision-target, else none where --iters asks for a count of iterations, else
    PRECISION_TARGET_LATENCY up to PRECISION_LATENCY_MAX bytes and PRECISION_TARGET_BANDWIDTH
    above; none for an operation of fixed iterations (one sample of sustained traffic)."""
    if op.fixed_iters:
        return 0.0
    if cfg.precision_target is not None:
        return cfg.precision_target
    if cfg.iters:
        return 0.0
    return PRECISION_TARGET_LATENCY if size <= PRECISION_LATENCY_MAX else PRECISION_TARGET_BANDWIDTH


def precision_cap(cfg):
    """The seconds of timed samples a size may reach while blocks are added: --budget where
    given, else PRECISION_CAP_S."""
    return cfg.budget or PRECISION_CAP_S


def wide(comm, MPI, times, target):
    """Collective: whether the median's 95 % interval of the worst-of-ranks sample times (each
    sample's maximum over the ranks) is wider than ``target`` (relative half-width); every rank
    gets the same answer."""
    worst = np.empty_like(times)
    comm.Allreduce(times, worst, op=MPI.MAX)
    return comm.allreduce(int(rel_halfwidth(worst) > target), op=MPI.MAX) > 0


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


def run(cfg):
    """Run one operation over cfg.sizes with one method, or with several in turn (cfg.method
    'a,b,c': one launch for a sweep; a method this machine cannot do is skipped with its reason
    and the others run); returns 0 or raises GpucommError."""
    dog = Watchdog(cfg.timeout, env_rank() or 0, cfg.op).start()
    MPI = _start_mpi(cfg, dog)
    comm = MPI.COMM_WORLD
    dog.rank, dog.where = comm.rank, "checking the request"
    methods = cfg.method.split(",")
    _check_request(cfg, comm, methods)

    dog.where = "locating the ranks"
    where = locate(comm, MPI, cfg.ranks_per_node)
    out = Output(cfg, comm.rank == 0)
    status = {}
    try:
        for name in methods:
            one = replace(cfg, method=name, sweep=len(methods) > 1)
            try:
                _run_method(one, comm, MPI, where, out, dog)
            except CapabilityError as exc:
                if len(methods) == 1 or not getattr(exc, "collective", False):
                    raise
                status[name] = f"skipped: {exc}"
                out.note(f"{name}: skipped: {exc}")
            else:
                status[name] = "ok"
        if "ok" not in status.values():  # every method skipped: nothing measured, not a pass
            raise collective(CapabilityError(f"none of {cfg.method} can run here: " + "; ".join(
                f"{name}: {why.split(': ', 1)[1]}" for name, why in status.items())))
        check_fired(comm, status)
    except GpucommError as exc:
        status.setdefault(name, f"failed: {exc}")
        exc.also = out.done(False, str(exc), status)
        raise
    finally:
        dog.cancel()
    out.done(True, status=status)
    return 0


def _check_request(cfg, comm, methods):
    """Collective, before any set-up: the request's errors (an unknown method, too few ranks,
    sizes the operation cannot take, a soak it does not allow, fault hooks that cannot fire, a
    --json that cannot be written), each a collective GpucommError."""
    op_cls = get_operation(cfg.op)
    for name in methods:
        get_method(name)
    try:
        check_environment()
    except GpucommError as exc:  # the same environment on every rank
        raise collective(exc) from None
    msg = op_cls.check_ranks(comm.size) or op_cls.check_options(cfg.op_args or {})
    if msg:
        raise collective(GpucommError(msg))
    op_cls.check_sizes(cfg.sizes)
    if cfg.validate_every and op_cls.no_soak:
        raise collective(GpucommError(f"--validate-every does not apply to {cfg.op}: {op_cls.no_soak}"))
    if cfg.validate_sizes:
        missing = [s for s in cfg.validate_sizes if s not in cfg.sizes]
        if not cfg.validate_every or missing:
            raise collective(GpucommError(
                "--validate-sizes needs --validate-every" if not cfg.validate_every else
                f"--validate-sizes: {', '.join(map(str, missing))} B not swept (--sizes: "
                f"{', '.join(map(str, cfg.sizes))})"))
    check_requests(comm.size, cfg.sizes, methods, cfg.op)
    if cfg.json_path:  # before the first size: a path that cannot be written is bad input now
        _collective(lambda: _writable(cfg.json_path) if comm.rank == 0 else None, comm)


def _start_mpi(cfg, dog):
    """mpi4py's MPI module, MPI initialised under the start-up sentinel (watchdog.py)."""
    try:
        import mpi4py
        if "mpi4py.MPI" not in sys.modules:
            mpi4py.rc.initialize, mpi4py.rc.finalize = False, True
        from mpi4py import MPI
    except Exception as exc:  # ImportError, RuntimeError: no libmpi found
        raise GpucommError(f"mpi4py cannot load an MPI library ({_first_line(exc)}); install one "
                           "(pip install gpucomm[mpi]) or load the site's MPI module") from None
    if not MPI.Is_initialized():
        sentinel = StartupSentinel(cfg.timeout, dog.rank).start()
        MPI.Init_thread()
        sentinel.done()
    return MPI


def _first_line(exc):
    """An exception's message as one line (a loader's error spans several)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


@dataclass
class MethodRun:
    """One method's run of the operation as its set-up (``_set_up``) leaves it: what every
    size's measurement reads."""

    cfg: RunConfig
    ctx: Context
    method: Method
    op: Operation
    timer: object                    # timers.HostTimer or DeviceTimer
    out: Output
    dog: Watchdog
    meta: dict                       # the run's meta (Output.begin has it; a failed capture sets its graph)
    loop: dict                       # meta.timed_loop_fields: in every record
    limit: Optional[float]           # the guard's GB/s (None: no guard)
    limit_source: str
    use_graph: bool                  # time samples as graph launches (until a capture fails)
    corrupt: Optional[tuple]         # test hooks (payload.faults): (rank, size) or None
    hang: Optional[tuple]
    soak: Optional[Soak] = None      # --validate-every (or the intermittent corruption hook)
    slow: float = 1.0                # test hook: this rank's host is this many times slower
    capped_at: Optional[int] = None  # --fit-memory: the largest size that fitted, where others did not


def _run_method(cfg, comm, MPI, where, out, dog):
    """One method's run of the operation over every size (and case)."""
    run = _set_up(cfg, comm, MPI, where, out, dog)
    try:
        for size, case in run.op.cases(run.cfg.sizes):
            _measure(run, size, case)
    finally:
        run.method.close()
    if out.enabled and not cfg.quiet:
        for line in run.op.summary([r for r in out.records if r["method"] == cfg.method]):
            print(line)


def _set_up(cfg, comm, MPI, where, out, dog):
    """Collective: backend, context, method, operation, buffers, timer, the guard's limit and
    the meta (Output.begin), in this order; the method's set-up seconds are the meta's."""
    t_setup, age = time.perf_counter(), process_age_s() if not out.metas else None
    op_cls, method_cls = get_operation(cfg.op), get_method(cfg.method)
    backend_name = _choose_backend(cfg, method_cls)
    dog.what, dog.where = f"{cfg.op}/{cfg.method}", "the method's set-up"
    backend = _collective(lambda: make_backend(backend_name, where.local_rank), comm)
    ctx = make_context(cfg, comm, MPI, backend, where)
    method = _collective(lambda: method_cls(ctx), comm)
    op = op_cls(ctx, method)
    ctx.comm_peers = op.peers()
    sizes, capped = _allocate(cfg, ctx, method, op)
    cfg = replace(cfg, sizes=sizes)
    _collective(lambda: method.setup(ctx.sendbuf, ctx.recvbuf), comm)
    timer_name = cfg.timer
    if cfg.sweep and not device_timed(backend, method):
        timer_name = "host"  # in a sweep, --timer device applies where the method allows it
    timer = make_timer(timer_name, backend, method)
    use_graph = _graph_wanted(cfg, method, backend)
    limit = nominal_limit(cfg, method, ctx, op)
    meta = run_meta(cfg, ctx, method, op, timer, use_graph, limit, age, t_setup)
    corrupt, every, soak = corruption_request(), corrupt_every_request(), None
    if cfg.validate_every or every:
        soak = Soak(cfg.validate_every, cfg.validate_sizes, op, comm.rank, corrupt, every)
    if cfg.validate_every:
        meta[VALIDATE_EVERY] = cfg.validate_every
    if every:
        meta["test_hook"] = f"{CORRUPT}={':'.join(map(str, corrupt))} {CORRUPT_EVERY}={every}"
    slow_node = slow_node_request()
    meta.update(slow_node_meta([p.host for p in ctx.placement], slow_node))
    if capped:
        meta[SIZES_CAPPED] = capped
    out.begin(meta, op.case_label if op.has_cases else None)
    if capped:
        out.note(capped)
    return MethodRun(cfg, ctx, method, op, timer, out, dog, meta, timed_loop_fields(method),
                     *limit, use_graph, None if every else corrupt, hang_request(), soak,
                     slow_node_factor(ctx.placement[ctx.rank].host, slow_node),
                     max(sizes) if capped else None)


def _allocate(cfg, ctx, method, op):
    """Collective: the sizes this method runs (cfg's; with --fit-memory those that fit, _fit)
    and why some were left out (None: none was), then the context's send and receive buffers
    for the largest, once they fit this rank's memory: the method's own (Method.allocate), else
    the backend's."""
    comm, backend = ctx.comm, ctx.backend
    sizes, capped = _fit(cfg, ctx, op) if cfg.fit_memory and op.fits_memory else (cfg.sizes, None)
    largest = max(sizes)
    send_bytes, recv_bytes = op.buffer_bytes(largest)
    _collective(lambda: _check_memory(backend, send_bytes + recv_bytes, ctx.local_size, largest), comm)
    own = _collective(lambda: method.allocate(send_bytes, recv_bytes), comm)
    if own is not None:
        ctx.sendbuf, ctx.recvbuf = own
    else:
        ctx.sendbuf = _collective(lambda: backend.empty(send_bytes), comm)
        ctx.recvbuf = _collective(lambda: backend.empty(recv_bytes), comm)
    return sizes, capped


def _fit(cfg, ctx, op):
    """Collective, for a default sweep (--fit-memory): (the sizes up to the largest that fits
    the smallest memory share of the ranks, the note naming what was left out and why), or
    (every size, None) where all fit or none does (then _check_memory's error stands)."""
    backend = ctx.backend
    free = backend.free_bytes(ctx.local_size)
    free = ctx.comm.allreduce(float("inf") if free is None else free, op=ctx.MPI.MIN)
    kept = [s for s in cfg.sizes if _need(backend, op.buffer_bytes(s)) <= free]
    if not kept or len(kept) == len(cfg.sizes):
        return cfg.sizes, None
    left = sorted(s for s in cfg.sizes if s not in kept)
    need = _need(backend, op.buffer_bytes(left[0]))
    return kept, (f"{cfg.method}: the default sweep stops at {size_label(max(kept))}: "
                  f"{size_label(left[0])} needs {need / 2**30:.2f} GiB per rank, {_where(backend)} has "
                  f"{free / 2**30:.2f} GiB free; left out: {', '.join(map(size_label, left))} "
                  "(sizes given explicitly must fit)")


def _need(backend, send_recv):
    """A rank's peak bytes for buffers of (send, receive) bytes (host memory: with what
    validation adds, HOST_PEAK_FACTOR)."""
    need = sum(send_recv)
    return need if backend.is_device else int(need * HOST_PEAK_FACTOR)


def _where(backend):
    return "its GPU" if backend.is_device else "the node's host memory (its share)"


def _measure(run, size, case):
    """One record: prepare, warm-up, timed samples, validation, statistics, then the guard."""
    cfg, comm, op, method = run.cfg, run.ctx.comm, run.op, run.method
    op.select(case)
    run.dog.where = f"size {size} B, preparing the buffers"
    t_size = time.perf_counter()
    iters = cfg.iters or op.fixed_iters or default_iters(size)
    warmup = cfg.warmup if cfg.warmup is not None else max(2, iters // 10)
    warmup = max(warmup, method.min_warmup(size)) if warmup else 0  # the path's own floor
    _collective(lambda: (op.prepare(size), method.prepare(size)), comm)
    warm = _warm_up(run, size, warmup)
    if cfg.budget and warmup:
        iters = budget_iters(iters, cfg.budget, comm.allreduce(warm, op=run.ctx.MPI.MAX))
    batch = min(cfg.batch, iters) if cfg.batch else default_batch(size, iters)
    if run.soak:
        run.soak.start(size)
    times, graphed, blocks, stopped = _timed_samples(run, size, batch, -(-iters // batch))
    worst = op.reduce_times(times) * op.time_scale
    run.dog.where = f"size {size} B, validation"
    soaked, wrong = run.soak.finish(comm, len(times) * batch, batch) if run.soak else ({}, None)
    if run.corrupt and run.corrupt == (comm.rank, size):
        op.corrupt(size)
    if wrong is None:
        _collective(lambda: _raise_if(op.validate(size), ValidationError), comm)
    stats = time_stats_us(worst)
    samples = len(times)
    rec = {"op": cfg.op, "method": cfg.method, "size": size, "iters": samples * batch,
           "batch": batch, "samples": samples, "warmup": warmup, "nranks": run.ctx.nranks,
           "time_us": stats, "validated": wrong is None, "graph": graphed,
           "timer": run.timer.name, **run.loop, **case, **soaked,
           PRECISION_FIELD: {**median_precision_us(worst, blocks), PREC_STOPPED: stopped},
           "wall_s": round(time.perf_counter() - t_size, 3)}
    if run.capped_at:
        rec[CAPPED_AT] = run.capped_at
    if run.meta.get("peer_sync"):
        rec["peer_sync"] = run.meta["peer_sync"]
    rec.update(op.metrics(size, stats["median"] * 1e-6))
    best = op.metrics(size, stats["min"] * 1e-6)
    rec["goodput_GBps_best"] = best["goodput_GBps"]
    run.out.record(rec)
    if wrong is not None:
        raise wrong
    _guard(run, size, case, best["busbw_GBps"])


def _warm_up(run, size, warmup):
    """Untimed iterations, one per barrier (connections are made before any graph is
    captured); the last one's seconds on this rank (0 without any)."""
    comm, op, method, dog = run.ctx.comm, run.op, run.method, run.dog
    warm = 0.0
    for i in range(warmup):
        dog.where = f"size {size} B, warm-up iteration {i}"
        dog.waiting = "a barrier"
        comm.Barrier()
        dog.waiting = "an iteration's communication with its peers"
        t0 = time.perf_counter()
        op.step(size)
        method.sync()
        warm = time.perf_counter() - t0
        dog.waiting = None
    return warm


def _timed_samples(run, size, batch, samples):
    """The timed samples of one size: ``samples`` samples of ``batch`` iterations (fewer where
    --budget is spent), then blocks added while the median's interval is wider than the size's
    target and its cap is not spent (_to_target); as one graph launch each where the method
    allows it.  (Each sample's seconds per iteration on this rank, whether a graph ran them,
    the time-ordered blocks they make, why the sampling stopped: contract.STOP_*.)

    A graph holds NCCL's captured work: ncclCommDestroy waits until every graph that captured
    the communicator is gone, so none outlives its size (nor the method, on an error)."""
    graph = None
    try:
        if run.use_graph:
            graph = _graph_of(run, size, batch)
        t_timed = time.perf_counter()
        times, spent, t_timed = _samples(run, size, batch, graph, (0, samples), t_timed, run.cfg.budget)
        times, blocks, stopped = _to_target(run, size, batch, graph, times, spent, t_timed)
        return times, graph is not None, blocks, stopped
    finally:
        graph = None


def _to_target(run, size, batch, graph, times, spent, t_timed):
    """Collective: blocks of samples added after the size's own (which make block_count blocks)
    while the median's interval is wider than its target (precision_target) and the size's
    timed seconds are under its cap (precision_cap); a quarter more blocks each round, each
    the length of the first ones.  (times, blocks, why it stopped)."""
    comm, MPI = run.ctx.comm, run.ctx.MPI
    target, cap = precision_target(run.cfg, size, run.op), precision_cap(run.cfg)
    first = block_count(len(times))
    length, blocks = max(1, len(times) // first), first
    while True:
        if target and not wide(comm, MPI, times, target):
            return times, blocks, STOP_TARGET if blocks > first else STOP_ITERS
        if spent:
            return times, blocks, STOP_CAP
        if not target:
            return times, blocks, STOP_ITERS
        if budget_spent(comm, t_timed, cap, len(times)):
            return times, blocks, STOP_CAP
        more = max(1, blocks // 4) * length
        added, spent, t_timed = _samples(run, size, batch, graph, (len(times), more), t_timed, cap)
        times = np.concatenate([times, added])
        blocks += max(1, round(len(added) / length))


def _samples(run, size, batch, graph, which, t_timed, budget):
    """Timed samples ``which`` = (index of the first, count), each ``batch`` iterations between
    a barrier and the timer (``graph``'s launch where given), until ``budget`` seconds since
    ``t_timed`` are spent (budget_spent; None: no budget): (each sample's seconds per iteration
    on this rank, whether the budget ended them, t_timed moved past the soak's checks)."""
    comm, op, timer, dog, hang = run.ctx.comm, run.op, run.timer, run.dog, run.hang
    soak, backend = run.soak, run.ctx.backend
    first, count = which
    times = np.empty(count, dtype=np.float64)
    for k in range(count):
        i = first + k
        dog.where = f"size {size} B, sample {i} ({batch} iteration(s) each)"
        dog.waiting = "the other ranks' word on the time budget"
        if budget_spent(comm, t_timed, budget, i):
            return times[:k], True, t_timed
        if soak is not None:  # between samples: re-arm after a check (not timed, nor budgeted)
            t_timed += soak.before_sample()
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
        elapsed = timer.stop()
        if run.slow > 1:  # test hook: this node is slow (inside the sample: its peers wait too)
            elapsed += busy_wait((run.slow - 1) * elapsed)
        times[k] = elapsed / batch
        dog.waiting = None
        if soak is not None:
            dog.waiting = "this rank's check of the sample's data (--validate-every)"
            t_timed += soak.after_sample(i, batch)
            dog.waiting = None
    return times, False, t_timed


def _graph_of(run, size, batch):
    """A captured graph of one sample's ``batch`` iterations, launched once (untimed: the first
    launch uploads it); None where the capture failed (the plain loop is timed then, unless
    --graph on).  On an error no graph is left referenced here (see _timed_samples)."""
    graph, note = _capture(run.ctx.comm, run.ctx.backend, lambda: run.op.loop(size, batch))
    try:
        if graph is None:
            if run.cfg.graph == "on":
                raise collective(CapabilityError(f"--graph on: {note}"))
            run.use_graph = run.meta["graph"] = False
            run.out.note(f"CUDA graph capture failed ({note}): timing the plain loop")
            return None
        graph.launch(run.ctx.backend.stream)
        run.method.sync()
        return graph
    except BaseException:
        graph = None
        raise


def _guard(run, size, case, busbw):
    """A collective PlausibilityError where the best sample's bus bandwidth passes the link's
    nominal limit (a measurement bug)."""
    if run.limit and busbw > run.limit:
        cfg, op = run.cfg, run.op
        what = f"{cfg.op}/{cfg.method}" + (f" {op.case_label(case)}" if case else "")
        raise collective(PlausibilityError(
            f"{what} at {size} B: {busbw:.1f} GB/s (best sample) is "
            f"above the link's nominal {run.limit:.1f} GB/s ({run.limit_source}): a measurement bug"))


def _graph_wanted(cfg, method, backend):
    """Whether to time the loop as a CUDA/HIP graph: where the method's whole iteration is device
    work on the rank's stream (Method.graph_capable); --graph on elsewhere is an error, auto
    falls back."""
    capable = backend.is_device and method.graph_capable
    if cfg.graph == "on" and not capable and not cfg.sweep:
        raise collective(GpucommError(
            f"--graph on: method {cfg.method} synchronises through the host in every iteration "
            f"(all device work: {CCL}'s iterations, {IPC_COPY}'s collectives with stream flags); "
            "use --graph auto or off"))
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


def _writable(path):
    """Raise GpucommError unless ``path`` can be written (it is opened for appending and left
    as it was: the records are written at the end; payload.cli refused other than regular
    files)."""
    existed = os.path.exists(path)
    try:
        with open(path, "a"):
            pass
    except OSError as exc:
        raise GpucommError(f"--json {path}: cannot write it ({exc.strerror})") from None
    if not existed:
        os.unlink(path)


#: a host rank's peak memory over its send and receive buffers: validation's expected pattern
#: and received copies come on top (peak RSS, 2 ranks, 256 MiB and 512 MiB, less the 44 MiB of
#: an 8 B run: pingpong and bw 2.0 (4.0x the size), allreduce 2.5 (5.0x), alltoall 1.5 (6.1x
#: the block, buffers 4x); the largest)
HOST_PEAK_FACTOR = 2.5


def _check_memory(backend, need, local_ranks, largest):
    """Raise GpucommError if this rank's buffers for the largest size do not fit its memory
    (host memory: with what validation adds, HOST_PEAK_FACTOR)."""
    need = _need(backend, (need,))
    free = backend.free_bytes(local_ranks)
    if free is not None and need > free:
        raise GpucommError(f"--sizes up to {largest} B needs {need / 2**30:.2f} GiB per rank, "
                           f"{_where(backend)} has {free / 2**30:.2f} GiB free: choose smaller sizes")


def _raise_if(message, cls):
    if message:
        raise cls(message)
