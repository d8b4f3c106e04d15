#!/bin/bash
export NCCL_NVLS_ENABLE=0
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export NVSHMEM_DISABLE_NVLS=1
export PATH=/tmp/gpucomm-ompi/bin:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun -np 2 --mca pml ucx -x LD_PRELOAD=/tmp/gpucomm-site/libucx/lib/libucs.so.0:/tmp/gpucomm-site/libucx/lib/libucm.so.0:/tmp/gpucomm-site/libucx/lib/libuct.so.0:/tmp/gpucomm-site/libucx/lib/libucp.so.0 -x UCX_MODULE_DIR=/tmp/gpucomm-site/libucx/lib/ucx -x GPUCOMM_GPU_AWARE_MPI=p2p /tmp/nccl-tests-build/sendrecv_perf -b 8 -e 1073741824 -f 2 -g 1 -c 1 -n 20 -w 2
