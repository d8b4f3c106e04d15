"""Command line: ``python -m gpucomm OPERATION --method M --sizes 1:1G ...`` under mpirun/srun."""

import argparse
import dataclasses
import math
import os
import stat
import sys
import time

from .. import __version__
from ..constants import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    LOOP_AUTO,
    LOOP_CHOICES,
    LOOP_ENV,
    METHODS,
    PAIR_SCOPES,
    PAIRS_ALL,
    PAIRS_ROUNDS,
)
from ..contract import ERROR_PREFIX, NUMBER_KINDS, PAYLOAD_OPTIONS, number_problem
from ..errors import GpucommError
from ..sizes import parse_sizes
from .topology import env_rank


def _early_error(message, code=EXIT_BAD_INPUT):
    """An error found before MPI starts, identical on every rank: rank 0 says it once; the other
    ranks wait a moment so the launcher does not end rank 0 before its line is out."""
    rank = env_rank() or 0
    if rank == 0:
        print(f"{ERROR_PREFIX} {message}", file=sys.stderr, flush=True)
    else:
        time.sleep(2)
    return code


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, printed once
        sys.exit(_early_error(f"{message} (see gpucomm --help)"))


def _number(kind):
    """argparse type: a number of contract.NUMBER_KINDS' ``kind`` (its type, range)."""
    typ = NUMBER_KINDS[kind][0]
    noun = "an integer" if typ is int else "a number"

    def convert(text):
        try:
            value = typ(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {noun}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        why = number_problem(value, kind)
        if why:
            raise argparse.ArgumentTypeError(f"{text!r} {why}")
        return value
    return convert


def _methods(text):
    """argparse type: METHOD, M1,M2,... or 'all' -> the comma-joined list, in METHODS order."""
    names = list(METHODS) if text.strip() == "all" else [t.strip() for t in text.split(",")]
    bad = [n for n in names if n not in METHODS]
    if bad or not names:
        raise argparse.ArgumentTypeError(
            f"unknown method {', '.join(map(repr, bad)) or repr(text)}: choose from {', '.join(METHODS)} or all")
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"{text!r} names a method twice")
    return ",".join(names)


#: PayloadOption.kind -> argparse type
TYPES = {**{kind: _number(kind) for kind in NUMBER_KINDS}, "methods": _methods}
_bandwidth, _positive_seconds = TYPES["GBps"], TYPES["seconds+"]


def add_option(parser, option):
    """One row of contract.PAYLOAD_OPTIONS as an argparse option of ``parser``."""
    kwargs = {"help": option.help, "dest": option.name}
    if option.action:
        kwargs["action"] = option.action
    else:
        kwargs.update(default=option.default, metavar=option.metavar, choices=option.choices)
        if option.kind:
            kwargs["type"] = TYPES[option.kind]
    if option.required:
        kwargs["required"] = True
    parser.add_argument(option.flag, **{k: v for k, v in kwargs.items() if v is not None or k == "default"})


def build_parser(epilog=None):
    """The payload's command line: one subcommand per operation, each with contract.PAYLOAD_OPTIONS
    (those of the operations that take them) and its own (the aggressor's, the pair matrix's, an
    operation's add_arguments); ``epilog``: the help's closing text (gpucomm.main: its other commands)."""
    from .ops import REGISTRY as OPS
    p = _Parser(prog="gpucomm", description="GPU-to-GPU communication benchmarks (run under mpirun or srun).",
                epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"gpucomm {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in OPS:
        s = sub.add_parser(name, help=f"run the {name} benchmark")
        for option in PAYLOAD_OPTIONS:
            if option.ops is None or name in option.ops:
                add_option(s, option)
        if OPS[name].sustained:
            _sustained_arguments(s)
        if hasattr(OPS[name], "add_arguments"):  # an operation's own options (its option_names)
            OPS[name].add_arguments(s)
        if OPS[name].paired:
            s.add_argument("--pairs", choices=PAIR_SCOPES, default=PAIRS_ALL,
                           help=f"{PAIRS_ALL}: every pair one at a time, then the rounds of disjoint "
                                f"pairs all at once; {PAIRS_ROUNDS}: the rounds only (n-1 rounds for "
                                f"n ranks, each pair in one: a matrix of many nodes; default {PAIRS_ALL})")
            s.add_argument("--between", type=TYPES["count0"], default=0, metavar="K",
                           help=f"with --pairs {PAIRS_ROUNDS}: only the pairs of one rank of [0, K) and one "
                                "of [K, n), in max(K, n-K) rounds (two groups of a node pair matrix in "
                                "groups: gpucomm.pairs.group_jobs); default 0, every pair")
    return p


#: an operation's own options (the aggressor's sustained traffic, the pair matrix's --pairs),
#: passed to it as RunConfig.op_args
OP_OPTIONS = ("duration", "target_bandwidth", "pattern", "ready_file", "stop_file", "pairs", "between")


def _own_options(op):
    """The option names an operation declares with its add_arguments (Operation.option_names)."""
    from .ops import REGISTRY as OPS
    return tuple(getattr(OPS[op], "option_names", ()))


def _sustained_arguments(s):
    from .ops.aggressor import PATTERNS, STREAMS
    s.add_argument("--duration", type=_positive_seconds, default=10.0, metavar="SECONDS",
                   help="seconds of traffic (one timed sample; default 10)")
    s.add_argument("--target-bandwidth", type=_bandwidth, default=0.0, metavar="GBPS",
                   help="pace each rank's sends to GBPS (GB/s); 0: as fast as possible (default)")
    s.add_argument("--pattern", choices=PATTERNS, default=STREAMS,
                   help="streams: rank i of node k exchanges with rank i of node k+N/2, both "
                        "directions; alltoall: every rank to every rank (default streams)")
    s.add_argument("--ready-file", metavar="FILE",
                   help="rank 0 writes FILE once the load is on (after the first timed iteration)")
    s.add_argument("--stop-file", metavar="FILE",
                   help="end the run early once FILE exists (checked every iteration)")


def run_config(args, **converted):
    """The launch's RunConfig from the parsed command line: every contract.PAYLOAD_OPTIONS row's
    value under its name (``converted``: those the command line's text is not yet, the sizes
    parsed ...), a row that is no RunConfig field in its ``op_args`` with the operation's own
    options: a new row reaches the engine without an edit here."""
    from .engine import RunConfig
    fields = {f.name for f in dataclasses.fields(RunConfig)}
    values = {o.name: getattr(args, o.name) for o in PAYLOAD_OPTIONS if hasattr(args, o.name)}
    values.update(converted, op=args.command)
    own = {k: getattr(args, k) for k in OP_OPTIONS + _own_options(args.command) if hasattr(args, k)}
    others = {k: v for k, v in values.items() if k not in fields}
    return RunConfig(**{k: v for k, v in values.items() if k in fields}, op_args={**others, **own})


def main(argv=None, epilog=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(epilog).parse_args(argv)
    try:
        sizes = parse_sizes(args.sizes)
        validate_sizes = parse_sizes(args.validate_sizes) if args.validate_sizes else None
    except GpucommError as exc:
        return _early_error(exc, exc.exit_code)
    loop = args.loop or os.environ.get(LOOP_ENV, "").strip() or LOOP_AUTO
    if loop not in LOOP_CHOICES:
        return _early_error(f"{LOOP_ENV}={loop!r}: choose one of {', '.join(LOOP_CHOICES)}")
    for name in ("ready_file", "stop_file"):  # a stale one would start a waiting script early,
        path = getattr(args, name, None)   # or end this run at once
        if path and os.path.exists(path):
            return _early_error(f"--{name.replace('_', '-')} {path} exists already: remove it first "
                                "(a file left by an earlier run)")
    problem = _path_problem(args)
    if problem:
        return _early_error(problem)
    from .engine import run
    cfg = run_config(args, sizes=sizes, validate_sizes=validate_sizes, loop=loop, timeout=args.timeout or None)
    try:
        return run(cfg)
    except GpucommError as exc:
        return _fail(exc, exc.exit_code, getattr(exc, "collective", False), getattr(exc, "also", None))
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED, False)
    except Exception as exc:  # a bug or an unexpected library failure: say so, end every rank
        if args.debug:
            import traceback
            traceback.print_exc()
        return _fail(f"internal error: {type(exc).__name__}: {exc}", EXIT_INTERNAL, False)


def _path_problem(args):
    """What is wrong with a file option, found before MPI starts (None: nothing): an empty
    --json, a --json that exists but is no regular file (a FIFO would block the run's end, a
    directory cannot be written), a --ready-file in a folder that does not exist."""
    path = args.json_path
    if path is not None:
        if not path.strip():
            return "--json '': an empty file name"
        if os.path.isdir(path):
            return f"--json {path}: is a directory, not a file"
        if os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode):
            return f"--json {path}: not a regular file"
    ready = getattr(args, "ready_file", None)
    if ready is not None:
        folder = os.path.dirname(ready) or "."
        if not ready.strip() or not os.path.isdir(folder):
            return f"--ready-file {ready!r}: its folder {folder} does not exist"
    if args.warmup == 0 and args.budget:
        return "--budget estimates the iterations from the last warm-up iteration: give --warmup 1 or more"
    return None


def _fail(message, code, collective, also=None):
    """Report an error and end this rank.  A collective error (every rank raised the same one)
    is printed once by rank 0, then all ranks meet in a barrier so that none exits before the
    line is out; a local one is printed by its rank, which then aborts the whole job, since the
    other ranks may be waiting for it in a call.  ``also``: a second line (rank 0's), such as
    a --json file that could not be written after the error."""
    try:
        from mpi4py import MPI
        live = MPI.Is_initialized() and not MPI.Is_finalized()
    except Exception:
        live = False
    if not live:
        return _early_error(f"{message}" + (f"\n{ERROR_PREFIX} {also}" if also else ""), code)
    comm = MPI.COMM_WORLD
    if collective:
        if comm.rank == 0:
            print(f"{ERROR_PREFIX} {message}", file=sys.stderr, flush=True)
            if also:
                print(f"{ERROR_PREFIX} {also}", file=sys.stderr, flush=True)
        comm.Barrier()
        return code
    print(f"{ERROR_PREFIX} rank {comm.rank}: {message}", file=sys.stderr, flush=True)
    if also:
        print(f"{ERROR_PREFIX} rank {comm.rank}: {also}", file=sys.stderr, flush=True)
    if comm.size > 1:
        comm.Abort(code)
    return code
