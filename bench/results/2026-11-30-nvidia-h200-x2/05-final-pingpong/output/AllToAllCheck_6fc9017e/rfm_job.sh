#!/bin/bash
export NCCL_NVLS_ENABLE=0
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export NVSHMEM_DISABLE_NVLS=1
export PATH=/tmp/gpucomm-ompi/bin:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun -np 2 --mca pml ucx -x LD_PRELOAD=/tmp/gpucomm-site/libucx/lib/libucs.so.0:/tmp/gpucomm-site/libucx/lib/libucm.so.0:/tmp/gpucomm-site/libucx/lib/libuct.so.0:/tmp/gpucomm-site/libucx/lib/libucp.so.0 -x UCX_MODULE_DIR=/tmp/gpucomm-site/libucx/lib/ucx -x GPUCOMM_GPU_AWARE_MPI=p2p /opt/torch/.venv/bin/python3 -m gpucomm alltoall --method ipc-copy --sizes 8:1G --json gpucomm_results.json
