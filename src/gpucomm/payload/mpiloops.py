"""The compiled timed loops themselves (numba), cached on disk: imported only by fastloop.load(),
inside its guard, after it has made the MPI library's symbols global (llvmlite), so that the
MPI calls below bind by name, the way a C program's do.

Declared by name (numba ExternalFunction) rather than through ctypes pointers, the loops can be
cached (``cache=True``: next to this file, or numba's per-user cache where that is read-only):
the first launch on a node compiles them, every later one loads them (the host method's set-up
about 1 s when they are compiled, a third of that when they are loaded).  Every argument is a 64-bit
integer; MPI's ``int`` arguments are declared int32, its handles (Open MPI: pointers; MPICH: ints)
int64, which the x86-64 and AArch64 calling conventions pass in the same registers.
"""

import numba
from numba import types

i64, i32 = types.int64, types.int32
#: int MPI_Send(const void *buf, int count, MPI_Datatype, int dest, int tag, MPI_Comm)
mpi_send = types.ExternalFunction("MPI_Send", i32(i64, i32, i64, i32, i32, i64))
#: int MPI_Recv(void *buf, int count, MPI_Datatype, int source, int tag, MPI_Comm, MPI_Status *)
mpi_recv = types.ExternalFunction("MPI_Recv", i32(i64, i32, i64, i32, i32, i64, i64))
#: int MPI_Isend / MPI_Irecv(buf, count, datatype, peer, tag, comm, MPI_Request *)
mpi_isend = types.ExternalFunction("MPI_Isend", i32(i64, i32, i64, i32, i32, i64, i64))
mpi_irecv = types.ExternalFunction("MPI_Irecv", i32(i64, i32, i64, i32, i32, i64, i64))
#: int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
mpi_waitall = types.ExternalFunction("MPI_Waitall", i32(i32, i64, i64))

#: (send buffer, receive buffer, bytes, MPI_BYTE, peer, tag, communicator, status, n)
P2P = i32(i64, i64, i64, i64, i64, i64, i64, i64, i64)
#: (buffer, bytes, MPI_BYTE, peer, tag, communicator, requests, bytes of a request, statuses,
#:  window, acknowledgement buffer, its tag, status, n)
WINDOW = i32(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)


@numba.njit(P2P, cache=True)
def ping(sbuf, rbuf, count, dtype, peer, tag, comm, status, n):
    for _ in range(n):
        err = mpi_send(sbuf, count, dtype, peer, tag, comm)
        if err:
            return err
        err = mpi_recv(rbuf, count, dtype, peer, tag, comm, status)
        if err:
            return err
    return 0


@numba.njit(P2P, cache=True)
def answer(sbuf, rbuf, count, dtype, peer, tag, comm, status, n):
    for _ in range(n):
        err = mpi_recv(rbuf, count, dtype, peer, tag, comm, status)
        if err:
            return err
        err = mpi_send(sbuf, count, dtype, peer, tag, comm)
        if err:
            return err
    return 0


@numba.njit(WINDOW, cache=True)
def send_windows(buf, count, dtype, peer, tag, comm, reqs, request_bytes, statuses, window, ack, ack_tag,
                 status, n):
    for _ in range(n):
        for w in range(window):
            err = mpi_isend(buf, count, dtype, peer, tag, comm, reqs + w * request_bytes)
            if err:
                return err
        err = mpi_waitall(window, reqs, statuses)
        if err:
            return err
        err = mpi_recv(ack, 1, dtype, peer, ack_tag, comm, status)
        if err:
            return err
    return 0


@numba.njit(WINDOW, cache=True)
def recv_windows(buf, count, dtype, peer, tag, comm, reqs, request_bytes, statuses, window, ack, ack_tag,
                 status, n):
    for _ in range(n):
        for w in range(window):
            err = mpi_irecv(buf, count, dtype, peer, tag, comm, reqs + w * request_bytes)
            if err:
                return err
        err = mpi_waitall(window, reqs, statuses)
        if err:
            return err
        err = mpi_send(ack, 1, dtype, peer, ack_tag, comm)
        if err:
            return err
    return 0
