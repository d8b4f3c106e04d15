#!/bin/bash
#SBATCH --job-name="rfm_NoiseCheck_633864bb"
#SBATCH --ntasks=8
#SBATCH --ntasks-per-node=2
#SBATCH --output=rfm_job.out
#SBATCH --error=rfm_job.err
#SBATCH --time=0:10:0
#SBATCH --nodes=4
#SBATCH --partition=cluster
#SBATCH --nodelist=gcn[1-4]
export OMPI_MCA_pml=ob1
export OMPI_MCA_btl=self,tcp
export OMPI_MCA_btl_tcp_if_include=10.77.0.0/24
export OMPI_MCA_oob_tcp_if_include=10.77.0.0/24
export SLURM_PMIX_FENCE=ring
export PYTHONUNBUFFERED=1
export PMIX_MCA_psec=native
/work/wt-20/.venv/bin/python3 -m gpucomm preflight --method host || exit $?
rm -f gpucomm_aggressor.ready gpucomm_aggressor.stop
srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --nodelist=gcn1,gcn2 --mpi=pmix /work/wt-20/.venv/bin/python3 -m gpucomm pingpong --method host --sizes 8,262144 --json gpucomm_quiet.json --iters 20000 --warmup 10 --budget 3 --timeout 210
gpucomm_start() { OMPI_MCA_btl_tcp_links=4 srun --nodes=2 --ntasks=4 --ntasks-per-node=2 --nodelist=gcn3,gcn4 --mpi=pmix /work/wt-20/.venv/bin/python3 -m gpucomm aggressor --method host --sizes 1M --pattern streams --duration 480 --ready-file gpucomm_aggressor.ready --stop-file gpucomm_aggressor.stop --json gpucomm_aggressor.json --quiet --timeout 540 --target-bandwidth 0.004 >gpucomm_aggressor.out 2>gpucomm_aggressor.err & gpucomm_aggressor=$!; }
gpucomm_ready() { gpucomm_t=0; while [ ! -e gpucomm_aggressor.ready ]; do if ! kill -0 $gpucomm_aggressor 2>/dev/null || [ $gpucomm_t -ge 30 ]; then return 1; fi; sleep 1; gpucomm_t=$((gpucomm_t + 1)); done; }
gpucomm_n=1; gpucomm_start; until gpucomm_ready; do kill $gpucomm_aggressor 2>/dev/null; wait $gpucomm_aggressor 2>/dev/null; if [ $gpucomm_n -ge 2 ]; then echo "gpucomm: error: the aggressor did not start its load in 30 s, 2 attempt(s) (see gpucomm_aggressor.err)" >&2; exit 1; fi; mv gpucomm_aggressor.err gpucomm_aggressor.err.$gpucomm_n; gpucomm_n=$((gpucomm_n + 1)); echo "gpucomm: the aggressor did not start its load: attempt $gpucomm_n"; gpucomm_start; done
srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --nodelist=gcn1,gcn2 --mpi=pmix /work/wt-20/.venv/bin/python3 -m gpucomm pingpong --method host --sizes 8,262144 --json gpucomm_noisy.json --iters 20000 --warmup 10 --budget 3 --timeout 210
touch gpucomm_aggressor.stop
wait $gpucomm_aggressor
