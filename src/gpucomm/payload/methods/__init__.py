"""Methods: the ways of moving bytes between two ranks (and their collectives).

Each method is a ``base.Method`` subclass over the engine's context (``payload.context``), in
its own file, declared once in constants.METHOD_DECLS (whose ``payload`` names its class: the
registry below reads it); the base class declares what the engine reads (name, backends, device_timer, graph_capable,
nominal_link, request_style, timed_loop/timed_loop_note, peer_sync, gpu_aware_mpi) and the
engine's hooks, with their defaults:

* ``allocate(send_bytes, recv_bytes)``  collective: the method's own (send, receive) buffers
  (nvshmem: symmetric memory); None (default): the backend's
* ``setup(sendbuf, recvbuf)``  collective, once: bind buffers, exchange handles, make communicators
* ``meta()``                   the method's fields of the run's meta ({} by default)
* ``prepare(nbytes)``          once per size, outside the timed region
* ``sync()``                   complete what the method has queued (end of every timed sample)
* ``close()``

and what the operations call (the default raises CapabilityError where a method has none):

* ``send(nbytes, peer)`` / ``recv(nbytes, peer)``  point-to-point of sendbuf[:n] -> recvbuf[:n]
* ``send_then_recv(nbytes, peer)`` / ``recv_then_send``  a ping and its answer, the answer to a
  ping (default: send and recv in turn; MPI methods post the answer's receive first)
* ``ping_loop(nbytes, peer, n)`` / ``answer_loop``  n pings (answers) back to back: the timed
  loop of a ping-pong sample (MPI methods bind their calls once per loop)
* ``send_window(nbytes, peer, window)`` / ``recv_window``  the bw operation: ``window`` messages
  one way, then a short acknowledgement back (``ack_send``/``ack_recv``)
* ``exchange(nbytes, peer)``  send and receive with one peer at the same time (bidirectional)
* ``allreduce(count)`` / ``alltoall(block_bytes)``  collectives, where the method has them
"""

import importlib

from ...constants import METHOD_DECLS
from ...errors import GpucommError


def load(payload, package=__name__):
    """The class a declaration's ``payload`` ("module:Class") names, under ``package``."""
    module, cls = payload.split(":")
    return getattr(importlib.import_module(f"{package}.{module}"), cls)


#: name -> class, one per declaration of constants.METHOD_DECLS
REGISTRY = {d.name: load(d.payload) for d in METHOD_DECLS}


def get_method(name):
    try:
        return REGISTRY[name]
    except KeyError:
        raise GpucommError(f"unknown method {name!r}: choose one of {', '.join(REGISTRY)}") from None
