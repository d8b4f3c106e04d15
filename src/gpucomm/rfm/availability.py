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

A check that a name filter (``-n``) names but that selects no partition of the system gets no
test case from ReFrame, which then says "PASSED 0/0" and exits 0: ``warn_unselected`` names it
and what it lacks, once per check (``reframe -c checks/ -n NodeStateCheck -r`` on a CPU node).
"""

import argparse
import sys

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


#: {check class: [whether a -n pattern named a variant, whether a named variant runs somewhere]},
#: filled as ReFrame instantiates each class's variants in turn (warn_unselected)
_NAMED = {}


def name_filters(argv=None):
    """The ``-n``/``--name`` patterns of ReFrame's command line."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("-n", "--name", action="append", dest="names", default=[])
    known, _ = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    return known.names


def named_nowhere(check, argv=None):
    """(whether a -n pattern of ``argv`` names ``check``, whether it then runs on a partition
    of the system with an environment: ReFrame's own test: valid_sysenv_comb)."""
    from types import SimpleNamespace

    from reframe.core.runtime import valid_sysenv_comb
    from reframe.frontend.filters import have_any_name
    names = name_filters(argv)
    if not names or not have_any_name(names)(SimpleNamespace(check=check)):
        return False, False
    return True, any(valid_sysenv_comb(check.valid_systems, check.valid_prog_environs).values())


def unselected_reason(check, partitions, argv=None):
    """The line that names ``check`` (a -n pattern named it, no variant of it runs on any of
    ``partitions``) and what each partition lacks."""
    specs = [s for s in check.valid_systems if s]
    why = [f"{p.fullname} lacks {' '.join('+' + f for f in missing_features(specs, set(p.features)))}"
           if not features_match(specs, set(p.features)) else
           f"no environment of {p.fullname} fits {' or '.join(check.valid_prog_environs)}" for p in partitions]
    return (f"-n {' -n '.join(name_filters(argv))} names {type(check).__name__}, which runs on no partition "
            f"of this system (it needs {' or '.join(specs)}: {'; '.join(why) or 'no partition'}): "
            "no test case of it runs")


def warn_unselected(check):
    """At the end of each variant's init: where a -n pattern named the check's variants and
    none of them runs on a partition, one warning at its last variant (unselected_reason)."""
    cls = type(check)
    named, runs = named_nowhere(check)
    seen = _NAMED.setdefault(cls, [False, False])
    seen[0], seen[1] = seen[0] or named, seen[1] or runs
    if check.variant_num == cls.num_variants - 1 and seen[0] and not seen[1]:
        import reframe.core.runtime as rt
        from reframe.core.logging import getlogger
        getlogger().warning(unselected_reason(check, rt.runtime().system.partitions))
