#!/bin/bash
#SBATCH --job-name="rfm_PairMatrixCheck_6c711f77"
#SBATCH --ntasks=1024
#SBATCH --ntasks-per-node=1
#SBATCH --output=rfm_job.out
#SBATCH --error=rfm_job.err
#SBATCH --time=2:43:0
#SBATCH --nodes=1024
#SBATCH --partition=normal
#SBATCH --account=acct
#SBATCH --gpus-per-node=1
#SBATCH --nodelist=nid[0001-1024]
#SBATCH --uenv=prgenv-gnu/26.3:v1
#SBATCH --view=default
export MPICH_OFI_NIC_POLICY=GPU
export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
export MPICH_GPU_SUPPORT_ENABLED=0
export NCCL_NET="AWS Libfabric"
export NCCL_NET_GDR_LEVEL=PHB
export NCCL_CROSS_NIC=1
export NCCL_PROTO=^LL128
export FI_CXI_DEFAULT_CQ_SIZE=131072
export FI_CXI_DEFAULT_TX_SIZE=16384
export FI_CXI_DISABLE_HOST_REGISTER=1
export FI_CXI_RX_MATCH_MODE=software
export FI_MR_CACHE_MONITOR=userfaultfd
export NCCL_IGNORE_CPU_AFFINITY=1
export FI_CXI_RDZV_GET_MIN=0
export FI_CXI_RDZV_THRESHOLD=0
export FI_CXI_RDZV_EAGER_SIZE=0
export NCCL_NCHANNELS_PER_NET_PEER=4
export NCCL_DEBUG=INFO
export NCCL_DEBUG_SUBSYS=INIT,NET
export NCCL_DEBUG_FILE=gpucomm_nccl_debug.%h.%p.log
/v/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/alps.md --plugin aws-ofi-nccl --net-plugin libnccl-net.so || exit $?
srun --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 REPO/config/bin/gpucomm-bind /v/bin/python -m gpucomm pair-matrix --method ccl --sizes 8,1M,256M --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 8787 --max-bandwidth 150 --fit-memory --pairs rounds
