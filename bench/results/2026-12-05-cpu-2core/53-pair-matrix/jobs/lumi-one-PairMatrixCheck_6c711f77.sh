#!/bin/bash
#SBATCH --job-name="rfm_PairMatrixCheck_6c711f77"
#SBATCH --ntasks=1024
#SBATCH --ntasks-per-node=1
#SBATCH --output=rfm_job.out
#SBATCH --error=rfm_job.err
#SBATCH --time=2:43:0
#SBATCH --nodes=1024
#SBATCH --partition=standard-g
#SBATCH --account=acct
#SBATCH --exclusive
#SBATCH --gpus-per-node=1
#SBATCH --nodelist=nid[0001-1024]
module load LUMI/25.03
module load partition/G
module load PrgEnv-gnu
module load craype-accel-amd-gfx90a
module load rocm
module load cray-python
module load aws-ofi-nccl/1.18.0-rocm
export MPICH_OFI_NIC_POLICY=GPU
export HSA_ENABLE_SDMA=0
export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export MPICH_GPU_SUPPORT_ENABLED=0
export NCCL_SOCKET_IFNAME=hsn0,hsn1,hsn2,hsn3
export NCCL_NET_GDR_LEVEL=3
export NCCL_ENABLE_DMABUF_SUPPORT=1
export CXI_FORK_SAFE=1
export CXI_FORK_SAFE_HP=1
export FI_CXI_DISABLE_CQ_HUGETLB=1
export NCCL_IGNORE_CPU_AFFINITY=1
export NCCL_DEBUG=INFO
export NCCL_DEBUG_SUBSYS=INIT,NET
export NCCL_DEBUG_FILE=gpucomm_nccl_debug.%h.%p.log
/v/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/lumi.md --plugin aws-ofi-nccl/1.18.0-rocm --net-plugin librccl-net.so || exit $?
srun --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 REPO/config/bin/gpucomm-bind /v/bin/python -m gpucomm pair-matrix --method ccl --sizes 8,1M,256M --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 8787 --max-bandwidth 200 --fit-memory --pairs rounds
