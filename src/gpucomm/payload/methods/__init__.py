"""Methods: the ways of moving bytes between two ranks (and their collectives).

Each method is a small class over the engine's context:

* ``setup(sendbuf, recvbuf)``  collective, once: bind buffers, exchange handles, make communicators
* ``prepare(nbytes)``          once per size, outside the timed region
* ``send(nbytes, peer)`` / ``recv(nbytes, peer)``  point-to-point of sendbuf[:n] -> recvbuf[:n]
* ``send_then_recv(nbytes, peer)`` / ``recv_then_send``  a ping and its answer, the answer to a
  ping (default: send and recv in turn; MPI methods post the answer's receive first)
* ``ping_loop(nbytes, peer, n)`` / ``answer_loop``  n pings (answers) back to back: the timed
  loop of a ping-pong sample (MPI methods bind their calls once per loop)
* ``send_window(nbytes, peer, window)`` / ``recv_window``  the bw operation: ``window`` messages
  one way, then a short acknowledgement back (``ack_send``/``ack_recv``)
* ``exchange(nbytes, peer)``  send and receive with one peer at the same time (bidirectional)
* ``sync()``                   complete what the method has queued (end of every timed iteration)
* ``allreduce(count)`` / ``alltoall(block_bytes)``  collectives, where the method has them
* ``close()``
* ``allocate(send_bytes, recv_bytes)``, optional: the method's own (send, receive) buffers,
  collective, instead of the backend's (nvshmem: symmetric memory)
"""

from ...errors import GpucommError
from .ccl import CclMethod
from .gpu_aware_mpi import GpuAwareMpiMethod
from .host import HostMethod
from .ipc_copy import IpcCopyMethod
from .nvshmem import NvshmemMethod
from .staging import StagingMethod

REGISTRY = {m.name: m for m in (HostMethod, StagingMethod, GpuAwareMpiMethod, IpcCopyMethod, CclMethod,
                                NvshmemMethod)}


def get_method(name):
    try:
        return REGISTRY[name]
    except KeyError:
        raise GpucommError(f"unknown method {name!r}: choose one of {', '.join(REGISTRY)}") from None
