#!/bin/bash
#SBATCH --job-name="rfm_NodePairMatrixCheck_699d6639"
#SBATCH --ntasks=4
#SBATCH --ntasks-per-node=1
#SBATCH --output=rfm_job.out
#SBATCH --error=rfm_job.err
#SBATCH --time=0:10:0
#SBATCH --nodes=4
#SBATCH --partition=cluster
export OMPI_MCA_pml=ob1
export OMPI_MCA_btl=self,tcp
export OMPI_MCA_btl_tcp_if_include=10.77.0.0/24
export OMPI_MCA_oob_tcp_if_include=10.77.0.0/24
export SLURM_PMIX_FENCE=ring
export PYTHONUNBUFFERED=1
export PMIX_MCA_psec=native
/work/wt-19p/.venv/bin/python3 -m gpucomm preflight --method host || exit $?
srun --mpi=pmix /work/wt-19p/.venv/bin/python3 -m gpucomm pair-matrix --method host --sizes 8,256K --json gpucomm_results.json --iters 5 --warmup 2 --budget 0.25 --timeout 525
