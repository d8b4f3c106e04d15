"""The MPI methods' compiled timed loops: the optional fast path (``--loop``).

A ping-pong sample is ``batch`` round trips.  From Python each round trip costs the interpreter
a few tenths of a microsecond more than osu_latency's C loop (four mpi4py calls and the loop
itself), the whole gap at 8 B.  Here a sample's loop is one call of a function numba compiles,
making the calls osu_latency and osu_bw make: MPI_Send and MPI_Recv per ping and answer; per bw
window ``window`` x MPI_Isend (MPI_Irecv), MPI_Waitall and the one-byte acknowledgement
(MPI_Recv / MPI_Send, tag TAG_DONE, as Method.notify).  The loops take raw buffer addresses
(numpy's, or a device array's __cuda_array_interface__: gpu-aware-mpi hands device memory to
MPI as mpi4py does) and mpi4py's handles of the communicator and MPI_BYTE.

numba and numba-mpi are optional (``pip install gpucomm[fast]``): this is the one payload module
that imports them, inside load() and guarded (tests/unit/test_layers.py), and a run without them
times the mpi4py loop and says why (contract.TIMED_LOOP_NOTE).  numba-mpi finds the MPI library
that mpi4py loaded (numba_mpi.common.LIB); the loops (payload/mpiloops.py) call it by name
rather than through numba-mpi's wrappers, which take numpy arrays only (no device buffer) on
MPI_COMM_WORLD only, allocate a status per receive, and whose receive takes about 5 s to compile.
They are loaded once per launch, in the method's constructor (outside every timed region), from
numba's on-disk cache where an earlier launch compiled them.
"""

import os

import numpy as np

from ..constants import LOOP_MPI4PY, LOOP_NUMBA_MPI
from ..errors import CapabilityError, GpucommError, collective

#: bytes reserved for one MPI_Status (Open MPI's is 24, MPICH's 20): the loops read none of it
STATUS_BYTES = 64
#: the install hint of a fallback's reason
INSTALL_HINT = "pip install gpucomm[fast]"


def address(arr):
    """The address of an array's first byte: numpy's, or a device array's (CUDA array interface)."""
    iface = getattr(arr, "__cuda_array_interface__", None) or arr.__array_interface__
    return int(iface["data"][0])


def _handle(MPI, obj):
    return int(MPI._handleof(obj))


class FastLoop:
    """The compiled loops of one launch and the handles they take; ``check`` turns an MPI error
    code into a GpucommError."""

    def __init__(self, MPI, comm, functions, request_bytes):
        self.MPI = MPI
        self.comm_h = _handle(MPI, comm)
        self.byte_h = _handle(MPI, MPI.BYTE)
        self.ping, self.answer, self.send_windows, self.recv_windows = functions
        self.request_bytes = request_bytes
        self.status = np.zeros(STATUS_BYTES, dtype=np.uint8)
        self.token = np.zeros(8, dtype=np.uint8)
        self.windows = {}  # window -> (request array, status array), allocated once

    def window_arrays(self, window):
        arrays = self.windows.get(window)
        if arrays is None:
            arrays = self.windows[window] = (np.zeros(window * self.request_bytes, dtype=np.uint8),
                                             np.zeros(window * STATUS_BYTES, dtype=np.uint8))
        return arrays

    def check(self, err, what):
        if err:
            try:
                text = self.MPI.Get_error_string(int(err))
            except Exception:  # an MPI that cannot name its own code
                text = "no description"
            raise GpucommError(f"{what} (compiled loop): MPI error {int(err)} ({text})")


#: communicator handle -> its FastLoop: the methods of one launch (a sweep) compile once
_LOADED = {}


def load(MPI, comm):
    """This rank's compiled loops (a FastLoop, compiled once per launch and communicator);
    CapabilityError says why not."""
    key = _handle(MPI, comm)
    if key in _LOADED:
        return _LOADED[key]
    # numba formats its internal errors with colorama where that is installed, and colorama's
    # exit handler then writes a terminal reset into the run's output: no highlighting
    os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")
    try:
        import llvmlite.binding
        import numba_mpi.common as numba_mpi_common
    except ImportError as exc:
        raise CapabilityError(f"numba-mpi is not installed ({exc}; {INSTALL_HINT})") from None
    except Exception as exc:  # numba_mpi.common: RuntimeError when it finds no MPI library
        raise CapabilityError(f"numba-mpi cannot load: {type(exc).__name__}: {exc}") from None
    try:
        # the MPI library's symbols, global: the loops call MPI_Send & co. by name
        llvmlite.binding.load_library_permanently(numba_mpi_common.LIB)
        from . import mpiloops  # compiled at import (explicit signatures), or loaded from numba's cache
        functions = (mpiloops.ping, mpiloops.answer, mpiloops.send_windows, mpiloops.recv_windows)
    except ImportError as exc:
        raise CapabilityError(f"numba is not installed ({exc}; {INSTALL_HINT})") from None
    except Exception as exc:  # numba's typing or lowering errors, a symbol missing
        raise CapabilityError(f"numba could not compile the MPI loops: {type(exc).__name__}: "
                              f"{str(exc).splitlines()[0] if str(exc) else ''}") from None
    loop = _LOADED[key] = FastLoop(MPI, comm, functions, MPI._sizeof(MPI.Request))
    return loop


def choose(ctx, wanted, not_here=None):
    """(FastLoop or None, why not): the same answer on every rank of ``ctx.comm``.

    ``wanted`` is --loop (constants.LOOP_CHOICES); ``not_here`` is the method's or the
    operation's reason why a compiled loop does not apply (None: it does).  With --loop
    numba-mpi, a fast path that cannot be had is a collective CapabilityError; with auto, the
    mpi4py loop and the reason."""
    if wanted == LOOP_MPI4PY:
        return None, f"--loop {LOOP_MPI4PY}"
    if not_here:
        if wanted == LOOP_NUMBA_MPI:
            raise collective(CapabilityError(f"--loop {LOOP_NUMBA_MPI}: {not_here}"))
        return None, not_here
    try:
        fast, why = load(ctx.MPI, ctx.comm), None
    except CapabilityError as exc:
        fast, why = None, str(exc)
    reasons = ctx.comm.allgather(why)
    failed = [(rank, w) for rank, w in enumerate(reasons) if w]
    if not failed:
        return fast, ""
    rank, why = failed[0]
    note = why if all(w == why for w in reasons) else f"rank {rank}: {why}"
    if wanted == LOOP_NUMBA_MPI:
        raise collective(CapabilityError(f"--loop {LOOP_NUMBA_MPI}: {note}"))
    return None, note
