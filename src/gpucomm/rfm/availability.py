"""The one answer to "can this method run here?", for every check and the health sweep.

A method needs features of the partition and of the environment (constants.METHOD_REQUIREMENTS,
which the per-method checks also use as valid_systems / valid_prog_environs), enough GPUs on a
node for its ranks, one node for ipc-copy, an MPI GPU-aware for collectives before
gpu-aware-mpi runs all-reduce or all-to-all on device buffers, and for nvshmem across real
nodes a remote transport the environment names (extras['nvshmem_remote_transport']: NVSHMEM
between nodes needs the site's network library, e.g. libfabric on Slingshot).

What can only be known on the node (NVSHMEM's library, nvcc and the kernels' build, P2P between
the GPUs) the payload answers itself with a one-line reason and exit 3
(payload/methods/nvshmem.py, payload/nvshmem/build.py).
"""

from ..constants import (COLLECTIVES, GPU_AWARE_FULL, GPU_AWARE_MPI, HOST, IPC_COPY,
                         METHOD_REQUIREMENTS, NVSHMEM, Extras)


def features_match(specs, features):
    """Whether ``features`` satisfy one of ReFrame's feature specs ('*', '+a +b')."""
    return any(spec == "*" or all(tok[1:] in features for tok in spec.split() if tok.startswith("+"))
               for spec in specs)


def gpus_per_node(partition):
    devs = partition.select_devices("gpu")
    return devs[0].num_devices if devs else 0


def unavailable(method, op, partition, environ, tasks_per_node, multi_node=False):
    """Why ``method`` cannot run ``op`` with ``tasks_per_node`` ranks on each node of
    ``partition`` in ``environ``, or None if it can."""
    systems, environs = METHOD_REQUIREMENTS[method]
    if not features_match(systems, set(partition.features)):
        return f"partition {partition.fullname} lacks {' or '.join(systems)}"
    if not features_match(environs, set(environ.features)):
        return f"environment {environ.name} lacks {' or '.join(environs)}"
    have = gpus_per_node(partition)
    if method != HOST and have < tasks_per_node:
        return f"{method} needs {tasks_per_node} GPUs on a node; {partition.fullname} has {have}"
    if method == IPC_COPY and multi_node:
        return "ipc-copy moves data between the GPUs of one node: no multi-node run"
    if method == NVSHMEM and multi_node and not environ.extras.get(Extras.NVSHMEM_REMOTE_TRANSPORT):
        return (f"environment {environ.name} names no NVSHMEM remote transport "
                f"(extras['{Extras.NVSHMEM_REMOTE_TRANSPORT}']): nvshmem runs within one node only")
    if method == GPU_AWARE_MPI and op in COLLECTIVES:
        level = environ.extras.get(Extras.GPU_AWARE_MPI_LEVEL, GPU_AWARE_FULL)
        if level != GPU_AWARE_FULL:
            return (f"the MPI of environment {environ.name} is GPU-aware for point-to-point only "
                    f"(level {level}): no {op} on device buffers")
    return None
