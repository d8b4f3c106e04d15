#!/bin/bash
#SBATCH --job-name="rfm_NodeAcceptanceCheck_19b13d83"
#SBATCH --ntasks=4
#SBATCH --ntasks-per-node=4
#SBATCH --output=rfm_job.out
#SBATCH --error=rfm_job.err
#SBATCH --time=10:5:0
#SBATCH --exclusive
#SBATCH --nodes=1
#SBATCH --nodelist=nid1009
#SBATCH --partition=normal
#SBATCH --account=gpucomm_test
#SBATCH --gpus-per-node=4
#SBATCH --uenv=prgenv-gnu/26.3:v1
#SBATCH --view=default
#SBATCH --reservation=gpucomm-new
export MPICH_OFI_NIC_POLICY=GPU
GPUCOMM_NODE_STAGE="$PWD"
: > "gpucomm_node_checks.txt"
# 0: AllReduceCheck %method=host
mkdir -p inner/0 && cd inner/0 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method host --recipe docs/sites/alps.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm allreduce --method host --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 0 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 1: AllReduceCheck %method=staging
mkdir -p inner/1 && cd inner/1 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method staging --recipe docs/sites/alps.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm allreduce --method staging --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 450 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 1 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 2: AllReduceCheck %method=gpu-aware-mpi
mkdir -p inner/2 && cd inner/2 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/alps.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm allreduce --method gpu-aware-mpi --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 450 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 2 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 3: AllReduceCheck %method=ipc-copy
mkdir -p inner/3 && cd inner/3 && (
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ipc-copy --recipe docs/sites/alps.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm allreduce --method ipc-copy --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 450 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 3 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 4: AllReduceCheck %method=ccl
mkdir -p inner/4 && cd inner/4 && (
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
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/alps.md --plugin aws-ofi-nccl --net-plugin libnccl-net.so || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm allreduce --method ccl --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 450 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 4 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 5: AllReduceCheck %method=nvshmem
mkdir -p inner/5 && cd inner/5 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=0
  export NVSHMEM_REMOTE_TRANSPORT=libfabric
  export NVSHMEM_LIBFABRIC_PROVIDER=cxi
  export NVSHMEM_DISABLE_CUDA_VMM=1
  export NVSHMEM_DISABLE_NVLS=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method nvshmem --recipe docs/sites/alps.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm allreduce --method nvshmem --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 450 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 5 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 6: AllToAllCheck %method=host
mkdir -p inner/6 && cd inner/6 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method host --recipe docs/sites/alps.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm alltoall --method host --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 6 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 7: AllToAllCheck %method=staging
mkdir -p inner/7 && cd inner/7 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method staging --recipe docs/sites/alps.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm alltoall --method staging --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 450 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 7 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 8: AllToAllCheck %method=gpu-aware-mpi
mkdir -p inner/8 && cd inner/8 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/alps.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm alltoall --method gpu-aware-mpi --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 450 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 8 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 9: AllToAllCheck %method=ipc-copy
mkdir -p inner/9 && cd inner/9 && (
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ipc-copy --recipe docs/sites/alps.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm alltoall --method ipc-copy --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 450 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 9 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 10: AllToAllCheck %method=ccl
mkdir -p inner/10 && cd inner/10 && (
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
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/alps.md --plugin aws-ofi-nccl --net-plugin libnccl-net.so || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm alltoall --method ccl --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 450 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 10 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 11: AllToAllCheck %method=nvshmem
mkdir -p inner/11 && cd inner/11 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=0
  export NVSHMEM_REMOTE_TRANSPORT=libfabric
  export NVSHMEM_LIBFABRIC_PROVIDER=cxi
  export NVSHMEM_DISABLE_CUDA_VMM=1
  export NVSHMEM_DISABLE_NVLS=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method nvshmem --recipe docs/sites/alps.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm alltoall --method nvshmem --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 450 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 11 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 12: DataPathsCheck
mkdir -p inner/12 && cd inner/12 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method staging --recipe docs/sites/alps.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm gpu-datapaths --method staging --sizes 4096,16384,65536,262144,1048576,4194304,16777216,67108864,268435456,1073741824 --json gpucomm_results.json --validate-every 1 --validate-sizes 1048576 --timeout 525 --max-bandwidth 450 --fit-memory --host-numa both
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 12 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 13: OsuCheck %bench=osu_latency %buffers=host
mkdir -p inner/13 && cd inner/13 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=0
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'osu_latency' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING osu_latency not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=2 --ntasks-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -m 1:4194304 -i 200 -c
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 13 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 14: OsuCheck %bench=osu_latency %buffers=device
mkdir -p inner/14 && cd inner/14 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=1
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'osu_latency' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING osu_latency not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -m 1:4194304 -i 200 -c -d cuda D D
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 14 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 15: OsuCheck %bench=osu_bw %buffers=host
mkdir -p inner/15 && cd inner/15 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=0
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'osu_bw' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING osu_bw not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=2 --ntasks-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -m 1:4194304 -c
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 15 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 16: OsuCheck %bench=osu_bw %buffers=device
mkdir -p inner/16 && cd inner/16 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=1
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'osu_bw' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING osu_bw not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -m 1:4194304 -c -d cuda D D
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 16 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 17: OsuCheck %bench=osu_bibw %buffers=host
mkdir -p inner/17 && cd inner/17 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=0
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'osu_bibw' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING osu_bibw not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=2 --ntasks-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -m 1:4194304 -c
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 17 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 18: OsuCheck %bench=osu_bibw %buffers=device
mkdir -p inner/18 && cd inner/18 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=1
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'osu_bibw' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING osu_bibw not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -m 1:4194304 -c -d cuda D D
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 18 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 19: OsuCheck %bench=osu_allreduce %buffers=host
mkdir -p inner/19 && cd inner/19 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=0
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'osu_allreduce' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING osu_allreduce not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=4 --ntasks-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -m 8:4194304 -f -c -T mpi_float
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 19 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 20: OsuCheck %bench=osu_allreduce %buffers=device
mkdir -p inner/20 && cd inner/20 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=1
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'osu_allreduce' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING osu_allreduce not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -m 8:4194304 -f -c -T mpi_float -d cuda
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 20 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 21: OsuCheck %bench=osu_alltoall %buffers=host
mkdir -p inner/21 && cd inner/21 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=0
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'osu_alltoall' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING osu_alltoall not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=4 --ntasks-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -m 8:4194304 -f -c
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 21 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 22: OsuCheck %bench=osu_alltoall %buffers=device
mkdir -p inner/22 && cd inner/22 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=1
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'osu_alltoall' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING osu_alltoall not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -m 8:4194304 -f -c -d cuda
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 22 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 23: OsuXcclCheck %bench=osu_xccl_latency
mkdir -p inner/23 && cd inner/23 && (
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
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'osu_xccl_latency' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING osu_xccl_latency not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -m 1:1073741824 -i 200
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 23 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 24: OsuXcclCheck %bench=osu_xccl_bw
mkdir -p inner/24 && cd inner/24 && (
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
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'osu_xccl_bw' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING osu_xccl_bw not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -m 1:1073741824
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 24 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 25: OsuXcclCheck %bench=osu_xccl_bibw
mkdir -p inner/25 && cd inner/25 && (
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
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'osu_xccl_bibw' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING osu_xccl_bibw not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -m 1:1073741824
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 25 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 26: OsuXcclCheck %bench=osu_xccl_allreduce
mkdir -p inner/26 && cd inner/26 && (
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
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'osu_xccl_allreduce' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING osu_xccl_allreduce not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -m 8:1073741824 -f -M 1073741824
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 26 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 27: OsuXcclCheck %bench=osu_xccl_alltoall
mkdir -p inner/27 && cd inner/27 && (
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
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'osu_xccl_alltoall' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING osu_xccl_alltoall not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -m 8:1073741824 -f -M 4294967296
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 27 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 28: NcclTestsCheck %test=sendrecv %mode=mpi
mkdir -p inner/28 && cd inner/28 && (
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
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'sendrecv_perf' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING sendrecv_perf not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -b 8 -e 1073741824 -f 2 -g 1 -c 1
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 28 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 29: NcclTestsCheck %test=sendrecv %mode=single
mkdir -p inner/29 && cd inner/29 && (
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
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'sendrecv_perf' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING sendrecv_perf not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=1 --ntasks-per-node=1 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -b 8 -e 1073741824 -f 2 -g 4 -c 1
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 29 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 30: NcclTestsCheck %test=all_reduce %mode=mpi
mkdir -p inner/30 && cd inner/30 && (
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
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'all_reduce_perf' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING all_reduce_perf not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -b 8 -e 1073741824 -f 2 -g 1 -c 1
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 30 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 31: NcclTestsCheck %test=all_reduce %mode=single
mkdir -p inner/31 && cd inner/31 && (
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
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'all_reduce_perf' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING all_reduce_perf not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=1 --ntasks-per-node=1 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -b 8 -e 1073741824 -f 2 -g 4 -c 1
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 31 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 32: NcclTestsCheck %test=alltoall %mode=mpi
mkdir -p inner/32 && cd inner/32 && (
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
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'alltoall_perf' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING alltoall_perf not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -b 32 -e 4294967296 -f 2 -g 1 -c 1
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 32 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 33: NcclTestsCheck %test=alltoall %mode=single
mkdir -p inner/33 && cd inner/33 && (
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
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'alltoall_perf' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING alltoall_perf not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=1 --ntasks-per-node=1 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -b 32 -e 4294967296 -f 2 -g 4 -c 1
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 33 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 34: NcclTestsCheck %test=all_gather %mode=mpi
mkdir -p inner/34 && cd inner/34 && (
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
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'all_gather_perf' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING all_gather_perf not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -b 32 -e 4294967296 -f 2 -g 1 -c 1
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 34 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 35: NcclTestsCheck %test=all_gather %mode=single
mkdir -p inner/35 && cd inner/35 && (
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
  GPUCOMM_TOOL=$(find -L '/user-environment/env/default' -maxdepth 6 -type f -name 'all_gather_perf' -perm -u+x 2>/dev/null | head -n 1)
  [ -n "$GPUCOMM_TOOL" ] || { echo "GPUCOMM-TOOL-MISSING all_gather_perf not found under /user-environment/env/default on $(hostname)"; exit 1; }
  srun --ntasks=1 --ntasks-per-node=1 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind "$GPUCOMM_TOOL" -b 32 -e 4294967296 -f 2 -g 4 -c 1
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 35 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 36: PairMatrixCheck %method=ipc-copy
mkdir -p inner/36 && cd inner/36 && (
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ipc-copy --recipe docs/sites/alps.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pair-matrix --method ipc-copy --sizes 8,1M,256M --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 150 --fit-memory --pairs all
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 36 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 37: PairMatrixCheck %method=ccl
mkdir -p inner/37 && cd inner/37 && (
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
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/alps.md --plugin aws-ofi-nccl --net-plugin libnccl-net.so || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pair-matrix --method ccl --sizes 8,1M,256M --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 150 --fit-memory --pairs all
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 37 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 38: PairMatrixCheck %method=gpu-aware-mpi
mkdir -p inner/38 && cd inner/38 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/alps.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pair-matrix --method gpu-aware-mpi --sizes 8,1M,256M --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 150 --fit-memory --pairs all
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 38 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 39: PairMatrixCheck %method=nvshmem
mkdir -p inner/39 && cd inner/39 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=0
  export NVSHMEM_REMOTE_TRANSPORT=libfabric
  export NVSHMEM_LIBFABRIC_PROVIDER=cxi
  export NVSHMEM_DISABLE_CUDA_VMM=1
  export NVSHMEM_DISABLE_NVLS=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method nvshmem --recipe docs/sites/alps.md || exit $?
  srun --ntasks=4 --ntasks-per-node=4 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pair-matrix --method nvshmem --sizes 8,1M,256M --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 150 --fit-memory --pairs all
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 39 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# skipped: PairMatrixCheck %method=host: pair-matrix of host buffers is for nodes without GPUs; alps:gh200 has GPUs: the GPU methods test its pairs
# 41: NodeStateCheck
mkdir -p inner/41 && cd inner/41 && (
  /scratch/gpucomm-venv/bin/python -m gpucomm.site.nodestate --expect gpucomm_nodestate_expected.json --json gpucomm_nodestate.json
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 41 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 42: BwCheck %method=host
mkdir -p inner/42 && cd inner/42 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method host --recipe docs/sites/alps.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method host --sizes 1:1G --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 42 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 43: BwCheck %method=staging
mkdir -p inner/43 && cd inner/43 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method staging --recipe docs/sites/alps.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method staging --sizes 1:1G --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 150 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 43 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 44: BwCheck %method=gpu-aware-mpi
mkdir -p inner/44 && cd inner/44 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/alps.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method gpu-aware-mpi --sizes 1:1G --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 150 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 44 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 45: BwCheck %method=ipc-copy
mkdir -p inner/45 && cd inner/45 && (
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ipc-copy --recipe docs/sites/alps.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method ipc-copy --sizes 1:1G --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 150 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 45 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 46: BwCheck %method=ccl
mkdir -p inner/46 && cd inner/46 && (
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
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/alps.md --plugin aws-ofi-nccl --net-plugin libnccl-net.so || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method ccl --sizes 1:1G --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 150 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 46 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 47: BwCheck %method=nvshmem
mkdir -p inner/47 && cd inner/47 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=0
  export NVSHMEM_REMOTE_TRANSPORT=libfabric
  export NVSHMEM_LIBFABRIC_PROVIDER=cxi
  export NVSHMEM_DISABLE_CUDA_VMM=1
  export NVSHMEM_DISABLE_NVLS=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method nvshmem --recipe docs/sites/alps.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method nvshmem --sizes 1:1G --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 150 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 47 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 48: NicPathCheck %nic=0 %method=ccl
mkdir -p inner/48 && cd inner/48 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,0
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
  export FI_CXI_DEVICE_NAME=cxi0
  export NCCL_P2P_DISABLE=1
  export NCCL_SHM_DISABLE=1
  export GPUCOMM_BIND_NCCL_HOSTID=gpucomm-nicpath-0,gpucomm-nicpath-1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/alps.md --plugin aws-ofi-nccl --net-plugin libnccl-net.so || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,2 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method ccl --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 48 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 49: NicPathCheck %nic=0 %method=gpu-aware-mpi
mkdir -p inner/49 && cd inner/49 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,0
  export MPICH_GPU_SUPPORT_ENABLED=1
  export FI_CXI_DEVICE_NAME=cxi0
  export MPIR_CVAR_NOLOCAL=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/alps.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:1,2 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method gpu-aware-mpi --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 49 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 50: NicPathCheck %nic=1 %method=ccl
mkdir -p inner/50 && cd inner/50 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=3,3
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
  export FI_CXI_DEVICE_NAME=cxi1
  export NCCL_P2P_DISABLE=1
  export NCCL_SHM_DISABLE=1
  export GPUCOMM_BIND_NCCL_HOSTID=gpucomm-nicpath-0,gpucomm-nicpath-1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/alps.md --plugin aws-ofi-nccl --net-plugin libnccl-net.so || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:217,218 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method ccl --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 50 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 51: NicPathCheck %nic=1 %method=gpu-aware-mpi
mkdir -p inner/51 && cd inner/51 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=3,3
  export MPICH_GPU_SUPPORT_ENABLED=1
  export FI_CXI_DEVICE_NAME=cxi1
  export MPIR_CVAR_NOLOCAL=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/alps.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:217,218 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method gpu-aware-mpi --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 51 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 52: NicPathCheck %nic=2 %method=ccl
mkdir -p inner/52 && cd inner/52 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=1,1
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
  export FI_CXI_DEVICE_NAME=cxi2
  export NCCL_P2P_DISABLE=1
  export NCCL_SHM_DISABLE=1
  export GPUCOMM_BIND_NCCL_HOSTID=gpucomm-nicpath-0,gpucomm-nicpath-1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/alps.md --plugin aws-ofi-nccl --net-plugin libnccl-net.so || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:73,74 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method ccl --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 52 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 53: NicPathCheck %nic=2 %method=gpu-aware-mpi
mkdir -p inner/53 && cd inner/53 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=1,1
  export MPICH_GPU_SUPPORT_ENABLED=1
  export FI_CXI_DEVICE_NAME=cxi2
  export MPIR_CVAR_NOLOCAL=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/alps.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:73,74 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method gpu-aware-mpi --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 53 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 54: NicPathCheck %nic=3 %method=ccl
mkdir -p inner/54 && cd inner/54 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=2,2
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
  export FI_CXI_DEVICE_NAME=cxi3
  export NCCL_P2P_DISABLE=1
  export NCCL_SHM_DISABLE=1
  export GPUCOMM_BIND_NCCL_HOSTID=gpucomm-nicpath-0,gpucomm-nicpath-1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/alps.md --plugin aws-ofi-nccl --net-plugin libnccl-net.so || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:145,146 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method ccl --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 54 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 55: NicPathCheck %nic=3 %method=gpu-aware-mpi
mkdir -p inner/55 && cd inner/55 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=2,2
  export MPICH_GPU_SUPPORT_ENABLED=1
  export FI_CXI_DEVICE_NAME=cxi3
  export MPIR_CVAR_NOLOCAL=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/alps.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=4 --mpi=cray_shasta --cpu-bind=map_cpu:145,146 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method gpu-aware-mpi --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 55 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# skipped: NicPathCheck %nic=4 %method=ccl: the node has 4 NIC(s): cxi0, cxi1, cxi2, cxi3
# skipped: NicPathCheck %nic=4 %method=gpu-aware-mpi: the node has 4 NIC(s): cxi0, cxi1, cxi2, cxi3
# skipped: NicPathCheck %nic=5 %method=ccl: the node has 4 NIC(s): cxi0, cxi1, cxi2, cxi3
# skipped: NicPathCheck %nic=5 %method=gpu-aware-mpi: the node has 4 NIC(s): cxi0, cxi1, cxi2, cxi3
# skipped: NicPathCheck %nic=6 %method=ccl: the node has 4 NIC(s): cxi0, cxi1, cxi2, cxi3
# skipped: NicPathCheck %nic=6 %method=gpu-aware-mpi: the node has 4 NIC(s): cxi0, cxi1, cxi2, cxi3
# skipped: NicPathCheck %nic=7 %method=ccl: the node has 4 NIC(s): cxi0, cxi1, cxi2, cxi3
# skipped: NicPathCheck %nic=7 %method=gpu-aware-mpi: the node has 4 NIC(s): cxi0, cxi1, cxi2, cxi3
# 64: PingPongCheck %method=host
mkdir -p inner/64 && cd inner/64 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method host --recipe docs/sites/alps.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pingpong --method host --sizes 1:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 64 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 65: PingPongCheck %method=staging
mkdir -p inner/65 && cd inner/65 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method staging --recipe docs/sites/alps.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pingpong --method staging --sizes 1:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 150 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 65 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 66: PingPongCheck %method=gpu-aware-mpi
mkdir -p inner/66 && cd inner/66 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/alps.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pingpong --method gpu-aware-mpi --sizes 1:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 150 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 66 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 67: PingPongCheck %method=ipc-copy
mkdir -p inner/67 && cd inner/67 && (
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ipc-copy --recipe docs/sites/alps.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pingpong --method ipc-copy --sizes 1:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 150 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 67 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 68: PingPongCheck %method=ccl
mkdir -p inner/68 && cd inner/68 && (
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
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/alps.md --plugin aws-ofi-nccl --net-plugin libnccl-net.so || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pingpong --method ccl --sizes 1:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 150 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 68 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 69: PingPongCheck %method=nvshmem
mkdir -p inner/69 && cd inner/69 && (
  export GPUCOMM_BIND_CUDA_VISIBLE_DEVICES=0,1,2,3
  export MPICH_GPU_SUPPORT_ENABLED=0
  export NVSHMEM_REMOTE_TRANSPORT=libfabric
  export NVSHMEM_LIBFABRIC_PROVIDER=cxi
  export NVSHMEM_DISABLE_CUDA_VMM=1
  export NVSHMEM_DISABLE_NVLS=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method nvshmem --recipe docs/sites/alps.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --mpi=cray_shasta --cpu-bind=map_cpu:1,73,145,217 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pingpong --method nvshmem --sizes 1:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 150 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 69 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
true
