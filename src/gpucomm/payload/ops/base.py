"""The operation interface the engine drives: every attribute and hook it reads, with defaults."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..context import Context
    from ..methods.base import Method


class Operation:
    """What one timed iteration does, over a method.  Before MPI work the engine asks the class
    (``check_ranks``, ``check_sizes``); then it makes one per method (``Operation(ctx, method)``,
    collective), reads ``peers``, ``buffer_bytes`` and ``meta``, and for every (size, case) of
    ``cases``: ``select``, ``prepare``, warm-up ``step``s, timed ``loop``s, ``reduce_times``,
    ``validate`` and ``metrics``; ``summary`` at the end.  ``prepare``, ``step``, ``validate``,
    ``corrupt`` and ``metrics`` are the operation's own; the rest have defaults."""

    #: the operation's name (constants.OPERATIONS)
    name: str = "?"
    #: the fewest ranks it runs on (check_ranks)
    min_ranks: int = 2
    #: the iteration's time is multiplied by this (0.5: a ping-pong reports half the round trip)
    time_scale: float = 1.0
    #: independent links the busbw figure may span: the guard's auto-detected limit (one GPU's
    #: links) is multiplied by it (multi ping-pong: one link per pair)
    parallel_links = 1
    #: iterations per size where --iters is not given (None: the engine's default_iters by size)
    fixed_iters: int | None = None
    #: the operation takes --window (messages per window: the context's ``window``)
    windowed = False
    #: the operation takes the sustained-traffic options (--duration ...: the context's ``op_args``)
    sustained = False
    #: the operation takes --pairs (the pair matrix: the context's ``op_args['pairs']``)
    paired = False
    #: whether cases() gives several measurements per size (their fields label the records)
    has_cases = False
    #: None where --validate-every applies (the data checked between timed samples, then
    #: prepare re-arms the buffers: payload.soak), else why it does not
    no_soak: str | None = None
    #: whether buffer_bytes only counts (a default sweep may then stop at the largest size that
    #: fits: --fit-memory); False where it allocates and checks memory itself (gpu-datapaths)
    fits_memory = True

    def __init__(self, ctx: Context, method: Method) -> None:
        self.ctx = ctx
        self.method = method
        self.be = ctx.backend

    @classmethod
    def check_ranks(cls, nranks: int) -> str | None:
        """An error message if the operation cannot run on ``nranks`` ranks, else None."""
        if nranks < cls.min_ranks:
            return (f"{cls.name} needs at least {cls.min_ranks} ranks, got {nranks} "
                    f"(start it with mpirun/srun -n {cls.min_ranks})")
        return None

    @classmethod
    def check_options(cls, op_args: dict[str, Any]) -> str | None:
        """What is wrong with the operation's own options (RunConfig.op_args), or None: bad
        input, said before anything is set up (before what this machine can do)."""
        return None

    @staticmethod
    def check_sizes(sizes: list[int]) -> None:
        """Raise a (collective) GpucommError if a size does not suit the operation."""

    def peers(self) -> list[int]:
        """The ranks this rank exchanges data with (methods that map peers' buffers use it)."""
        return self.ctx.peers()

    def meta(self) -> dict[str, Any]:
        """Extra fields for the run's JSON meta."""
        return {}

    def buffer_bytes(self, max_size: int) -> tuple[int, int]:
        """(send bytes, receive bytes) to allocate for the largest size."""
        return max_size, max_size

    def cases(self, sizes: list[int]) -> list[tuple[int, dict[str, Any]]]:
        """The measurements, in order: (size, case) where case is a dict of record fields that
        tells the measurements of one size apart (e.g. the pair of a pair matrix); {} by default."""
        return [(size, {}) for size in sizes]

    def select(self, case: dict[str, Any]) -> None:
        """Set up for the next case (before prepare)."""

    def case_label(self, case: dict[str, Any]) -> str:
        """A case as the human table and error messages name it ("k=v k=v")."""
        return " ".join(f"{k}={v}" for k, v in case.items())

    def reduce_times(self, times: np.ndarray) -> np.ndarray:
        """Collective: each sample's time of the measurement from this rank's ``times``: the
        maximum over all ranks (the operation ends when its last rank does)."""
        worst = np.empty_like(times)
        self.ctx.comm.Allreduce(times, worst, op=self.ctx.MPI.MAX)
        return worst

    def summary(self, records: list[dict[str, Any]]) -> list[str]:
        """Lines rank 0 prints after the last record (e.g. a pair matrix); none by default."""
        return []

    def prepare(self, size: int) -> None:
        """Once per size (and case), outside the timed region: fill the buffers."""
        raise NotImplementedError

    def step(self, size: int) -> None:
        """One iteration; the engine's timer then waits for the method (method.sync())."""
        raise NotImplementedError

    def loop(self, size: int, n: int) -> None:
        """``n`` iterations back to back: one timed sample (or what a CUDA graph captures)."""
        for _ in range(n):
            self.step(size)

    def validate(self, size: int) -> str | None:
        """None, or a message naming what was wrong in this rank's received data."""
        raise NotImplementedError

    def corrupt(self, size: int) -> None:
        """Test hook: damage one received element so that validation must fail."""
        raise NotImplementedError

    def metrics(self, size: int, time_s: float) -> dict[str, Any]:
        """The record's figures for one iteration of ``time_s`` seconds (goodput_GBps, busbw_GBps)."""
        raise NotImplementedError
