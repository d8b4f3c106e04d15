"""gpucomm: GPU-to-GPU communication benchmarks and ReFrame checks.

Layers (docs/architecture.md): ``payload`` runs on compute nodes under mpirun/srun (numpy,
mpi4py, cupy only); ``rfm`` is the ReFrame library the checks in checks/ build on; ``native``
parses OSU and nccl-tests output; ``site`` holds node probing and site-configuration helpers;
``analysis`` holds report, compare, references and tolerances (pandas, matplotlib).  What they
share: ``constants`` (names), ``contract`` (the payload's output), ``errors``, ``sizes``,
``metrics`` and ``pairs``.
"""

__version__ = "0.1.0"
