"""The one answer to "can this method run here?", for every check and the health sweep.

Every fact comes from the method's declaration (constants.METHOD_DECLS): a method needs
features of the partition and of the environment (its ``systems`` and ``environs``), enough GPUs
on a node for its ranks (``gpu``), one node (``one_node``: ipc-copy), an MPI GPU-aware for
collectives before it runs all-reduce or all-to-all on device buffers
(``collectives_need_full_gpu_aware``: gpu-aware-mpi), and across real nodes a remote transport
the environment names (``needs_remote_transport``: nvshmem; extras['nvshmem_remote_transport']:
NVSHMEM between nodes needs the site's network library, e.g. libfabric on Slingshot).

Selection asks less than this: a check is selected on every partition of gpucomm's configuration
whose features fit (``selection``: e.g. +gpu) and with every environment, so that a check which
cannot run there (no CuPy, no NCCL, an MPI that is not GPU-aware) is a SKIP with this reason,
never a check that vanished; an environment without the MPI every method launches with is a
failure (``missing_mpi``), since then nothing at all can run.

What can only be known on the node (NVSHMEM's library, nvcc and the kernels' build, P2P between
the GPUs) the payload answers itself with a one-line reason and exit 3
(payload/methods/nvshmem.py, payload/nvshmem/build.py).
"""

from ..constants import (
    COLLECTIVES,
    FEATURE_GPUCOMM,
    FEATURE_MPI,
    GPU_AWARE_FULL,
    METHOD_OF_NAME,
    METHOD_REQUIREMENTS,
    Extras,
)


def features_match(specs, features):
    """Whether ``features`` satisfy one of ReFrame's feature specs ('*', '+a +b')."""
    return any(spec == "*" or all(tok[1:] in features for tok in spec.split() if tok.startswith("+"))
               for spec in specs)


def missing_features(specs, features):
    """The features ``features`` lacks for the spec of ``specs`` it comes closest to."""
    gaps = [[tok[1:] for tok in spec.split() if tok.startswith("+") and tok[1:] not in features]
            for spec in specs]
    return min(gaps, key=len)


def gpus_per_node(partition):
    devs = partition.select_devices("gpu")
    return devs[0].num_devices if devs else 0


def selection(systems):
    """(valid_systems, valid_prog_environs) of a check needing the partition features
    ``systems``: those partitions of gpucomm's configuration (FEATURE_GPUCOMM), every
    environment (unavailable() says at setup why one does not fit)."""
    return [f"+{FEATURE_GPUCOMM}" + ("" if s == "*" else f" {s}") for s in systems], ["*"]


def missing_mpi(environ, environs):
    """A one-line reason where every spec of ``environs`` needs MPI and ``environ`` has none
    (nothing can launch: a failure, not a skip), else None."""
    needs = all(f"+{FEATURE_MPI}" in spec.split() for spec in environs)
    if not needs or FEATURE_MPI in environ.features:
        return None
    return (f"environment {environ.name} has no MPI (feature '{FEATURE_MPI}'): install one "
            "(pip install 'gpucomm[mpi]' on a node without a site MPI; the local system finds its "
            "mpirun on PATH) or load the site's MPI in the environment")


def unavailable(method, op, partition, environ, tasks_per_node, multi_node=False,
                requirements=None):
    """Why ``method`` cannot run ``op`` with ``tasks_per_node`` ranks on each node of
    ``partition`` in ``environ``, or None if it can.  ``requirements`` (partition specs,
    environment specs) replaces the method's (a native tool needs other features)."""
    systems, environs = requirements or METHOD_REQUIREMENTS[method]
    if not features_match(systems, set(partition.features)):
        return f"partition {partition.fullname} lacks {' or '.join(systems)}"
    if not features_match(environs, set(environ.features)):
        return (f"environment {environ.name} lacks {', '.join(missing_features(environs, environ.features))}"
                f" ({method} needs {' or '.join(environs)})")
    decl = METHOD_OF_NAME[method]
    have = gpus_per_node(partition)
    if decl.gpu and have < tasks_per_node:
        return f"{method} needs {tasks_per_node} GPUs on a node; {partition.fullname} has {have}"
    if decl.one_node and multi_node:
        return f"{method} moves data between the GPUs of one node: no multi-node run"
    if decl.needs_remote_transport and multi_node and not environ.extras.get(Extras.NVSHMEM_REMOTE_TRANSPORT):
        return (f"environment {environ.name} names no NVSHMEM remote transport "
                f"(extras['{Extras.NVSHMEM_REMOTE_TRANSPORT}']): {method} runs within one node only")
    if decl.collectives_need_full_gpu_aware and op in COLLECTIVES:
        level = environ.extras.get(Extras.GPU_AWARE_MPI_LEVEL, GPU_AWARE_FULL)
        if level != GPU_AWARE_FULL:
            return (f"the MPI of environment {environ.name} is GPU-aware for point-to-point only "
                    f"(level {level}): no {op} on device buffers")
    return None


def sweep_unavailable(method, op, partition, environ, tasks_per_node, multi_node=False):
    """unavailable(), and for the health sweep also a method the environment leaves out of it
    with its reason (extras['sweep_left_out']: {method: why}, e.g. one not yet verified on the
    site): the sweep stays a check of what is known to work, the method its own checks."""
    return (unavailable(method, op, partition, environ, tasks_per_node, multi_node)
            or environ.extras.get(Extras.SWEEP_LEFT_OUT, {}).get(method))
