#!/bin/bash
#SBATCH --job-name="rfm_MultiPingPongCheck_bed3e610"
#SBATCH --ntasks=2
#SBATCH --ntasks-per-node=1
#SBATCH --output=rfm_job.out
#SBATCH --error=rfm_job.err
#SBATCH --time=0:10:0
#SBATCH --nodes=2
#SBATCH --partition=cluster
#SBATCH --nodelist=gcn1,gcn3
export OMPI_MCA_pml=ob1
export OMPI_MCA_btl=self,tcp
export OMPI_MCA_btl_tcp_if_include=10.77.0.0/24
export OMPI_MCA_oob_tcp_if_include=10.77.0.0/24
export SLURM_PMIX_FENCE=ring
export PYTHONUNBUFFERED=1
export PMIX_MCA_psec=native
/work/wt-19p/.venv/bin/python3 -m gpucomm preflight --method host || exit $?
srun --mpi=pmix /work/wt-19p/.venv/bin/python3 -m gpucomm multi-pingpong --method host --sizes 8,64K,1M --json gpucomm_results.json --iters 10 --timeout 525
