#!/bin/bash
#SBATCH --job-name="rfm_PairMatrixCheck_00f57254"
#SBATCH --ntasks=256
#SBATCH --ntasks-per-node=1
#SBATCH --output=rfm_job.out
#SBATCH --error=rfm_job.err
#SBATCH --time=0:32:0
#SBATCH --nodes=256
#SBATCH --partition=boost_usr_prod
#SBATCH --account=acct
#SBATCH --exclusive
#SBATCH --gres=gpu:1
#SBATCH --nodelist=nid[0385-0512,0897-1024]
#SBATCH --qos=boost_qos_bprod
module load gcc/12.2.0
module load cuda/12.2
module load openmpi/4.1.6--gcc--12.2.0-cuda-12.2
module load nccl/2.22.3-1--gcc--12.2.0-cuda-12.2-spack0.22
module load python/3.11.6--gcc--12.2.0
export OMPI_MCA_pml=ucx
export OMPI_MCA_coll_hcoll_enable=0
export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
export NCCL_DEBUG=INFO
export NCCL_DEBUG_SUBSYS=INIT,NET
export NCCL_DEBUG_FILE=gpucomm_nccl_debug.%h.%p.log
/v/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/leonardo.md || exit $?
srun --cpus-per-task=8 --cpu-bind=cores REPO/config/bin/gpucomm-bind /v/bin/python -m gpucomm pair-matrix --method ccl --sizes 8,1M,256M --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 1713 --max-bandwidth 100 --fit-memory --pairs rounds --between 128
