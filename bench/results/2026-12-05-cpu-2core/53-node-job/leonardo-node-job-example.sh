#!/bin/bash
#SBATCH --job-name="rfm_NodeAcceptanceCheck_99a9d146"
#SBATCH --ntasks=4
#SBATCH --ntasks-per-node=4
#SBATCH --output=rfm_job.out
#SBATCH --error=rfm_job.err
#SBATCH --time=5:25:0
#SBATCH --exclusive
#SBATCH --nodes=1
#SBATCH --nodelist=nid0986
#SBATCH --partition=boost_usr_prod
#SBATCH --account=gpucomm_test
#SBATCH --exclusive
#SBATCH --gres=gpu:4
#SBATCH --reservation=gpucomm-new
module load gcc/12.2.0
module load cuda/12.2
module load openmpi/4.1.6--gcc--12.2.0-cuda-12.2
module load nccl/2.22.3-1--gcc--12.2.0-cuda-12.2-spack0.22
module load python/3.11.6--gcc--12.2.0
export OMPI_MCA_pml=ucx
export OMPI_MCA_coll_hcoll_enable=0
GPUCOMM_NODE_STAGE="$PWD"
: > "gpucomm_node_checks.txt"
# 0: AllReduceCheck %method=host
mkdir -p inner/0 && cd inner/0 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method host --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm allreduce --method host --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 0 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 1: AllReduceCheck %method=staging
mkdir -p inner/1 && cd inner/1 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method staging --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm allreduce --method staging --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 300 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 1 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 2: AllReduceCheck %method=gpu-aware-mpi
mkdir -p inner/2 && cd inner/2 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/leonardo.md --mpi-cuda || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm allreduce --method gpu-aware-mpi --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 300 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 2 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 3: AllReduceCheck %method=ipc-copy
mkdir -p inner/3 && cd inner/3 && (
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ipc-copy --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm allreduce --method ipc-copy --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 300 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 3 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 4: AllReduceCheck %method=ccl
mkdir -p inner/4 && cd inner/4 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  export NCCL_DEBUG=INFO
  export NCCL_DEBUG_SUBSYS=INIT,NET
  export NCCL_DEBUG_FILE=gpucomm_nccl_debug.%h.%p.log
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm allreduce --method ccl --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 300 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 4 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# skipped: AllReduceCheck %method=nvshmem: environment openmpi-nccl lacks nvshmem (nvshmem needs +mpi +cupy +nvshmem)
# 6: AllToAllCheck %method=host
mkdir -p inner/6 && cd inner/6 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method host --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm alltoall --method host --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 6 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 7: AllToAllCheck %method=staging
mkdir -p inner/7 && cd inner/7 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method staging --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm alltoall --method staging --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 300 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 7 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 8: AllToAllCheck %method=gpu-aware-mpi
mkdir -p inner/8 && cd inner/8 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/leonardo.md --mpi-cuda || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm alltoall --method gpu-aware-mpi --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 300 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 8 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 9: AllToAllCheck %method=ipc-copy
mkdir -p inner/9 && cd inner/9 && (
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ipc-copy --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm alltoall --method ipc-copy --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 300 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 9 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 10: AllToAllCheck %method=ccl
mkdir -p inner/10 && cd inner/10 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  export NCCL_DEBUG=INFO
  export NCCL_DEBUG_SUBSYS=INIT,NET
  export NCCL_DEBUG_FILE=gpucomm_nccl_debug.%h.%p.log
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm alltoall --method ccl --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 300 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 10 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# skipped: AllToAllCheck %method=nvshmem: environment openmpi-nccl lacks nvshmem (nvshmem needs +mpi +cupy +nvshmem)
# 12: DataPathsCheck
mkdir -p inner/12 && cd inner/12 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method staging --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm gpu-datapaths --method staging --sizes 4096,16384,65536,262144,1048576,4194304,16777216,67108864,268435456,1073741824 --json gpucomm_results.json --validate-every 1 --validate-sizes 1048576 --timeout 525 --max-bandwidth 31.5 --fit-memory --host-numa both
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 12 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# skipped: OsuCheck %bench=osu_latency %buffers=host: osu_latency not found: set GPUCOMM_OSU_DIR, the environment's extras['osu_dir'], -S tool_dir=..., or put it on PATH
# skipped: OsuCheck %bench=osu_latency %buffers=device: osu_latency not found: set GPUCOMM_OSU_DIR, the environment's extras['osu_dir'], -S tool_dir=..., or put it on PATH
# skipped: OsuCheck %bench=osu_bw %buffers=host: osu_bw not found: set GPUCOMM_OSU_DIR, the environment's extras['osu_dir'], -S tool_dir=..., or put it on PATH
# skipped: OsuCheck %bench=osu_bw %buffers=device: osu_bw not found: set GPUCOMM_OSU_DIR, the environment's extras['osu_dir'], -S tool_dir=..., or put it on PATH
# skipped: OsuCheck %bench=osu_bibw %buffers=host: osu_bibw not found: set GPUCOMM_OSU_DIR, the environment's extras['osu_dir'], -S tool_dir=..., or put it on PATH
# skipped: OsuCheck %bench=osu_bibw %buffers=device: osu_bibw not found: set GPUCOMM_OSU_DIR, the environment's extras['osu_dir'], -S tool_dir=..., or put it on PATH
# skipped: OsuCheck %bench=osu_allreduce %buffers=host: osu_allreduce not found: set GPUCOMM_OSU_DIR, the environment's extras['osu_dir'], -S tool_dir=..., or put it on PATH
# skipped: OsuCheck %bench=osu_allreduce %buffers=device: osu_allreduce not found: set GPUCOMM_OSU_DIR, the environment's extras['osu_dir'], -S tool_dir=..., or put it on PATH
# skipped: OsuCheck %bench=osu_alltoall %buffers=host: osu_alltoall not found: set GPUCOMM_OSU_DIR, the environment's extras['osu_dir'], -S tool_dir=..., or put it on PATH
# skipped: OsuCheck %bench=osu_alltoall %buffers=device: osu_alltoall not found: set GPUCOMM_OSU_DIR, the environment's extras['osu_dir'], -S tool_dir=..., or put it on PATH
# skipped: OsuXcclCheck %bench=osu_xccl_latency: osu_xccl_latency not found: set GPUCOMM_OSU_DIR, the environment's extras['osu_dir'], -S tool_dir=..., or put it on PATH
# skipped: OsuXcclCheck %bench=osu_xccl_bw: osu_xccl_bw not found: set GPUCOMM_OSU_DIR, the environment's extras['osu_dir'], -S tool_dir=..., or put it on PATH
# skipped: OsuXcclCheck %bench=osu_xccl_bibw: osu_xccl_bibw not found: set GPUCOMM_OSU_DIR, the environment's extras['osu_dir'], -S tool_dir=..., or put it on PATH
# skipped: OsuXcclCheck %bench=osu_xccl_allreduce: osu_xccl_allreduce not found: set GPUCOMM_OSU_DIR, the environment's extras['osu_dir'], -S tool_dir=..., or put it on PATH
# skipped: OsuXcclCheck %bench=osu_xccl_alltoall: osu_xccl_alltoall not found: set GPUCOMM_OSU_DIR, the environment's extras['osu_dir'], -S tool_dir=..., or put it on PATH
# skipped: NcclTestsCheck %test=sendrecv %mode=mpi: sendrecv_perf not found: set GPUCOMM_NCCL_TESTS_DIR, the environment's extras['nccl_tests_dir'], -S tool_dir=..., or put it on PATH
# skipped: NcclTestsCheck %test=sendrecv %mode=single: sendrecv_perf not found: set GPUCOMM_NCCL_TESTS_DIR, the environment's extras['nccl_tests_dir'], -S tool_dir=..., or put it on PATH
# skipped: NcclTestsCheck %test=all_reduce %mode=mpi: all_reduce_perf not found: set GPUCOMM_NCCL_TESTS_DIR, the environment's extras['nccl_tests_dir'], -S tool_dir=..., or put it on PATH
# skipped: NcclTestsCheck %test=all_reduce %mode=single: all_reduce_perf not found: set GPUCOMM_NCCL_TESTS_DIR, the environment's extras['nccl_tests_dir'], -S tool_dir=..., or put it on PATH
# skipped: NcclTestsCheck %test=alltoall %mode=mpi: alltoall_perf not found: set GPUCOMM_NCCL_TESTS_DIR, the environment's extras['nccl_tests_dir'], -S tool_dir=..., or put it on PATH
# skipped: NcclTestsCheck %test=alltoall %mode=single: alltoall_perf not found: set GPUCOMM_NCCL_TESTS_DIR, the environment's extras['nccl_tests_dir'], -S tool_dir=..., or put it on PATH
# skipped: NcclTestsCheck %test=all_gather %mode=mpi: all_gather_perf not found: set GPUCOMM_NCCL_TESTS_DIR, the environment's extras['nccl_tests_dir'], -S tool_dir=..., or put it on PATH
# skipped: NcclTestsCheck %test=all_gather %mode=single: all_gather_perf not found: set GPUCOMM_NCCL_TESTS_DIR, the environment's extras['nccl_tests_dir'], -S tool_dir=..., or put it on PATH
# 36: PairMatrixCheck %method=ipc-copy
mkdir -p inner/36 && cd inner/36 && (
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ipc-copy --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pair-matrix --method ipc-copy --sizes 8,1M,256M --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory --pairs all
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 36 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 37: PairMatrixCheck %method=ccl
mkdir -p inner/37 && cd inner/37 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  export NCCL_DEBUG=INFO
  export NCCL_DEBUG_SUBSYS=INIT,NET
  export NCCL_DEBUG_FILE=gpucomm_nccl_debug.%h.%p.log
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pair-matrix --method ccl --sizes 8,1M,256M --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory --pairs all
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 37 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 38: PairMatrixCheck %method=gpu-aware-mpi
mkdir -p inner/38 && cd inner/38 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/leonardo.md --mpi-cuda || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pair-matrix --method gpu-aware-mpi --sizes 8,1M,256M --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory --pairs all
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 38 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# skipped: PairMatrixCheck %method=nvshmem: environment openmpi-nccl lacks nvshmem (nvshmem needs +mpi +cupy +nvshmem)
# skipped: PairMatrixCheck %method=host: pair-matrix of host buffers is for nodes without GPUs; leonardo:booster has GPUs: the GPU methods test its pairs
# 41: NodeStateCheck
mkdir -p inner/41 && cd inner/41 && (
  /scratch/gpucomm-venv/bin/python -m gpucomm.site.nodestate --expect gpucomm_nodestate_expected.json --json gpucomm_nodestate.json
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 41 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 42: BwCheck %method=host
mkdir -p inner/42 && cd inner/42 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method host --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method host --sizes 1:1G --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 42 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 43: BwCheck %method=staging
mkdir -p inner/43 && cd inner/43 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method staging --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gres=gpu:2 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method staging --sizes 1:1G --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 43 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 44: BwCheck %method=gpu-aware-mpi
mkdir -p inner/44 && cd inner/44 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/leonardo.md --mpi-cuda || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gres=gpu:2 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method gpu-aware-mpi --sizes 1:1G --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 44 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 45: BwCheck %method=ipc-copy
mkdir -p inner/45 && cd inner/45 && (
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ipc-copy --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gres=gpu:2 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method ipc-copy --sizes 1:1G --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 45 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 46: BwCheck %method=ccl
mkdir -p inner/46 && cd inner/46 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  export NCCL_DEBUG=INFO
  export NCCL_DEBUG_SUBSYS=INIT,NET
  export NCCL_DEBUG_FILE=gpucomm_nccl_debug.%h.%p.log
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gres=gpu:2 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method ccl --sizes 1:1G --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 46 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# skipped: BwCheck %method=nvshmem: environment openmpi-nccl lacks nvshmem (nvshmem needs +mpi +cupy +nvshmem)
# 48: NicPathCheck %nic=0 %method=ccl
mkdir -p inner/48 && cd inner/48 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,0
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  export NCCL_DEBUG=INFO
  export NCCL_DEBUG_SUBSYS=INIT,NET
  export NCCL_DEBUG_FILE=gpucomm_nccl_debug.%h.%p.log
  export NCCL_IB_HCA==mlx5_0
  export NCCL_P2P_DISABLE=1
  export NCCL_SHM_DISABLE=1
  export GPUCOMM_BIND_NCCL_HOSTID=gpucomm-nicpath-0,gpucomm-nicpath-1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method ccl --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 50 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 48 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 49: NicPathCheck %nic=0 %method=gpu-aware-mpi
mkdir -p inner/49 && cd inner/49 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,0
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1
  export UCX_TLS=rc,cuda_copy
  export UCX_NET_DEVICES=mlx5_0:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/leonardo.md --mpi-cuda || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method gpu-aware-mpi --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 50 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 49 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 50: NicPathCheck %nic=1 %method=ccl
mkdir -p inner/50 && cd inner/50 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=1,1
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  export NCCL_DEBUG=INFO
  export NCCL_DEBUG_SUBSYS=INIT,NET
  export NCCL_DEBUG_FILE=gpucomm_nccl_debug.%h.%p.log
  export NCCL_IB_HCA==mlx5_1
  export NCCL_P2P_DISABLE=1
  export NCCL_SHM_DISABLE=1
  export GPUCOMM_BIND_NCCL_HOSTID=gpucomm-nicpath-0,gpucomm-nicpath-1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method ccl --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 50 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 50 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 51: NicPathCheck %nic=1 %method=gpu-aware-mpi
mkdir -p inner/51 && cd inner/51 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=1,1
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_1:1
  export UCX_TLS=rc,cuda_copy
  export UCX_NET_DEVICES=mlx5_1:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/leonardo.md --mpi-cuda || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method gpu-aware-mpi --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 50 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 51 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 52: NicPathCheck %nic=2 %method=ccl
mkdir -p inner/52 && cd inner/52 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=2,2
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  export NCCL_DEBUG=INFO
  export NCCL_DEBUG_SUBSYS=INIT,NET
  export NCCL_DEBUG_FILE=gpucomm_nccl_debug.%h.%p.log
  export NCCL_IB_HCA==mlx5_2
  export NCCL_P2P_DISABLE=1
  export NCCL_SHM_DISABLE=1
  export GPUCOMM_BIND_NCCL_HOSTID=gpucomm-nicpath-0,gpucomm-nicpath-1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method ccl --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 50 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 52 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 53: NicPathCheck %nic=2 %method=gpu-aware-mpi
mkdir -p inner/53 && cd inner/53 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=2,2
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_2:1
  export UCX_TLS=rc,cuda_copy
  export UCX_NET_DEVICES=mlx5_2:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/leonardo.md --mpi-cuda || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method gpu-aware-mpi --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 50 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 53 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 54: NicPathCheck %nic=3 %method=ccl
mkdir -p inner/54 && cd inner/54 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=3,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  export NCCL_DEBUG=INFO
  export NCCL_DEBUG_SUBSYS=INIT,NET
  export NCCL_DEBUG_FILE=gpucomm_nccl_debug.%h.%p.log
  export NCCL_IB_HCA==mlx5_3
  export NCCL_P2P_DISABLE=1
  export NCCL_SHM_DISABLE=1
  export GPUCOMM_BIND_NCCL_HOSTID=gpucomm-nicpath-0,gpucomm-nicpath-1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method ccl --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 50 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 54 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 55: NicPathCheck %nic=3 %method=gpu-aware-mpi
mkdir -p inner/55 && cd inner/55 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=3,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_3:1
  export UCX_TLS=rc,cuda_copy
  export UCX_NET_DEVICES=mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/leonardo.md --mpi-cuda || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gres=gpu:4 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method gpu-aware-mpi --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 50 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 55 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# skipped: NicPathCheck %nic=4 %method=ccl: the node has 4 NIC(s): mlx5_0, mlx5_1, mlx5_2, mlx5_3
# skipped: NicPathCheck %nic=4 %method=gpu-aware-mpi: the node has 4 NIC(s): mlx5_0, mlx5_1, mlx5_2, mlx5_3
# skipped: NicPathCheck %nic=5 %method=ccl: the node has 4 NIC(s): mlx5_0, mlx5_1, mlx5_2, mlx5_3
# skipped: NicPathCheck %nic=5 %method=gpu-aware-mpi: the node has 4 NIC(s): mlx5_0, mlx5_1, mlx5_2, mlx5_3
# skipped: NicPathCheck %nic=6 %method=ccl: the node has 4 NIC(s): mlx5_0, mlx5_1, mlx5_2, mlx5_3
# skipped: NicPathCheck %nic=6 %method=gpu-aware-mpi: the node has 4 NIC(s): mlx5_0, mlx5_1, mlx5_2, mlx5_3
# skipped: NicPathCheck %nic=7 %method=ccl: the node has 4 NIC(s): mlx5_0, mlx5_1, mlx5_2, mlx5_3
# skipped: NicPathCheck %nic=7 %method=gpu-aware-mpi: the node has 4 NIC(s): mlx5_0, mlx5_1, mlx5_2, mlx5_3
# 64: PingPongCheck %method=host
mkdir -p inner/64 && cd inner/64 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method host --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pingpong --method host --sizes 1:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 64 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 65: PingPongCheck %method=staging
mkdir -p inner/65 && cd inner/65 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method staging --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gres=gpu:2 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pingpong --method staging --sizes 1:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 65 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 66: PingPongCheck %method=gpu-aware-mpi
mkdir -p inner/66 && cd inner/66 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/leonardo.md --mpi-cuda || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gres=gpu:2 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pingpong --method gpu-aware-mpi --sizes 1:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 66 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 67: PingPongCheck %method=ipc-copy
mkdir -p inner/67 && cd inner/67 && (
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ipc-copy --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gres=gpu:2 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pingpong --method ipc-copy --sizes 1:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 67 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 68: PingPongCheck %method=ccl
mkdir -p inner/68 && cd inner/68 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export GPUCOMM_BIND_UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1
  export NCCL_DEBUG=INFO
  export NCCL_DEBUG_SUBSYS=INIT,NET
  export NCCL_DEBUG_FILE=gpucomm_nccl_debug.%h.%p.log
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/leonardo.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gres=gpu:2 --cpus-per-task=8 --cpu-bind=cores <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pingpong --method ccl --sizes 1:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 68 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# skipped: PingPongCheck %method=nvshmem: environment openmpi-nccl lacks nvshmem (nvshmem needs +mpi +cupy +nvshmem)
true
