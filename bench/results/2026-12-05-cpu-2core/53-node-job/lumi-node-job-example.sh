#!/bin/bash
#SBATCH --job-name="rfm_NodeAcceptanceCheck_3a0a0bd0"
#SBATCH --ntasks=8
#SBATCH --ntasks-per-node=8
#SBATCH --output=rfm_job.out
#SBATCH --error=rfm_job.err
#SBATCH --time=5:25:0
#SBATCH --exclusive
#SBATCH --nodes=1
#SBATCH --nodelist=nid0780
#SBATCH --partition=standard-g
#SBATCH --account=gpucomm_test
#SBATCH --exclusive
#SBATCH --gpus-per-node=8
#SBATCH --reservation=gpucomm-new
module load LUMI/25.03
module load partition/G
module load PrgEnv-gnu
module load craype-accel-amd-gfx90a
module load rocm
module load cray-python
module load aws-ofi-nccl/1.18.0-rocm
export MPICH_OFI_NIC_POLICY=GPU
export HSA_ENABLE_SDMA=0
GPUCOMM_NODE_STAGE="$PWD"
: > "gpucomm_node_checks.txt"
# 0: AllReduceCheck %method=host
mkdir -p inner/0 && cd inner/0 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method host --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=8 --ntasks-per-node=8 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm allreduce --method host --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 0 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 1: AllReduceCheck %method=staging
mkdir -p inner/1 && cd inner/1 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method staging --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=8 --ntasks-per-node=8 --gpus-per-node=8 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm allreduce --method staging --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 600 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 1 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 2: AllReduceCheck %method=gpu-aware-mpi
mkdir -p inner/2 && cd inner/2 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
  export MPICH_GPU_SUPPORT_ENABLED=1
  export LD_PRELOAD=${CRAY_MPICH_ROOTDIR}/gtl/lib/libmpi_gtl_hsa.so
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=8 --ntasks-per-node=8 --gpus-per-node=8 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm allreduce --method gpu-aware-mpi --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 600 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 2 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 3: AllReduceCheck %method=ipc-copy
mkdir -p inner/3 && cd inner/3 && (
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ipc-copy --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=8 --ntasks-per-node=8 --gpus-per-node=8 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm allreduce --method ipc-copy --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 600 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 3 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 4: AllReduceCheck %method=ccl
mkdir -p inner/4 && cd inner/4 && (
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
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/lumi.md --plugin aws-ofi-nccl/1.18.0-rocm --net-plugin librccl-net.so || exit $?
  srun --ntasks=8 --ntasks-per-node=8 --gpus-per-node=8 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm allreduce --method ccl --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 600 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 4 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 5: AllToAllCheck %method=host
mkdir -p inner/5 && cd inner/5 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method host --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=8 --ntasks-per-node=8 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm alltoall --method host --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 5 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 6: AllToAllCheck %method=staging
mkdir -p inner/6 && cd inner/6 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method staging --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=8 --ntasks-per-node=8 --gpus-per-node=8 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm alltoall --method staging --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 600 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 6 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 7: AllToAllCheck %method=gpu-aware-mpi
mkdir -p inner/7 && cd inner/7 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
  export MPICH_GPU_SUPPORT_ENABLED=1
  export LD_PRELOAD=${CRAY_MPICH_ROOTDIR}/gtl/lib/libmpi_gtl_hsa.so
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=8 --ntasks-per-node=8 --gpus-per-node=8 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm alltoall --method gpu-aware-mpi --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 600 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 7 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 8: AllToAllCheck %method=ipc-copy
mkdir -p inner/8 && cd inner/8 && (
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ipc-copy --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=8 --ntasks-per-node=8 --gpus-per-node=8 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm alltoall --method ipc-copy --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 600 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 8 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 9: AllToAllCheck %method=ccl
mkdir -p inner/9 && cd inner/9 && (
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
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/lumi.md --plugin aws-ofi-nccl/1.18.0-rocm --net-plugin librccl-net.so || exit $?
  srun --ntasks=8 --ntasks-per-node=8 --gpus-per-node=8 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm alltoall --method ccl --sizes 8:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 600 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 9 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 10: DataPathsCheck
mkdir -p inner/10 && cd inner/10 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method staging --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=8 --ntasks-per-node=8 --gpus-per-node=8 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm gpu-datapaths --method staging --sizes 4096,16384,65536,262144,1048576,4194304,16777216,67108864,268435456,1073741824 --json gpucomm_results.json --validate-every 1 --validate-sizes 1048576 --timeout 525 --max-bandwidth 36 --fit-memory --host-numa both
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 10 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
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
# 34: PairMatrixCheck %method=ipc-copy
mkdir -p inner/34 && cd inner/34 && (
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ipc-copy --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=8 --ntasks-per-node=8 --gpus-per-node=8 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pair-matrix --method ipc-copy --sizes 8,1M,256M --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 200 --fit-memory --pairs all
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 34 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 35: PairMatrixCheck %method=ccl
mkdir -p inner/35 && cd inner/35 && (
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
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/lumi.md --plugin aws-ofi-nccl/1.18.0-rocm --net-plugin librccl-net.so || exit $?
  srun --ntasks=8 --ntasks-per-node=8 --gpus-per-node=8 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pair-matrix --method ccl --sizes 8,1M,256M --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 200 --fit-memory --pairs all
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 35 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 36: PairMatrixCheck %method=gpu-aware-mpi
mkdir -p inner/36 && cd inner/36 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
  export MPICH_GPU_SUPPORT_ENABLED=1
  export LD_PRELOAD=${CRAY_MPICH_ROOTDIR}/gtl/lib/libmpi_gtl_hsa.so
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=8 --ntasks-per-node=8 --gpus-per-node=8 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pair-matrix --method gpu-aware-mpi --sizes 8,1M,256M --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 200 --fit-memory --pairs all
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 36 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# skipped: PairMatrixCheck %method=host: pair-matrix of host buffers is for nodes without GPUs; lumi:standard-g has GPUs: the GPU methods test its pairs
# 38: NodeStateCheck
mkdir -p inner/38 && cd inner/38 && (
  /scratch/gpucomm-venv/bin/python -m gpucomm.site.nodestate --expect gpucomm_nodestate_expected.json --json gpucomm_nodestate.json
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 38 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 39: BwCheck %method=host
mkdir -p inner/39 && cd inner/39 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method host --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method host --sizes 1:1G --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 39 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 40: BwCheck %method=staging
mkdir -p inner/40 && cd inner/40 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method staging --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method staging --sizes 1:1G --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 200 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 40 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 41: BwCheck %method=gpu-aware-mpi
mkdir -p inner/41 && cd inner/41 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
  export MPICH_GPU_SUPPORT_ENABLED=1
  export LD_PRELOAD=${CRAY_MPICH_ROOTDIR}/gtl/lib/libmpi_gtl_hsa.so
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method gpu-aware-mpi --sizes 1:1G --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 200 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 41 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 42: BwCheck %method=ipc-copy
mkdir -p inner/42 && cd inner/42 && (
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ipc-copy --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method ipc-copy --sizes 1:1G --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 200 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 42 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 43: BwCheck %method=ccl
mkdir -p inner/43 && cd inner/43 && (
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
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/lumi.md --plugin aws-ofi-nccl/1.18.0-rocm --net-plugin librccl-net.so || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method ccl --sizes 1:1G --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 200 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 43 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 44: NicPathCheck %nic=0 %method=ccl
mkdir -p inner/44 && cd inner/44 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=0,1
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
  export FI_CXI_DEVICE_NAME=cxi0
  export NCCL_P2P_DISABLE=1
  export NCCL_SHM_DISABLE=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/lumi.md --plugin aws-ofi-nccl/1.18.0-rocm --net-plugin librccl-net.so || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=8 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method ccl --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 44 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 45: NicPathCheck %nic=0 %method=gpu-aware-mpi
mkdir -p inner/45 && cd inner/45 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=0,1
  export MPICH_GPU_SUPPORT_ENABLED=1
  export LD_PRELOAD=${CRAY_MPICH_ROOTDIR}/gtl/lib/libmpi_gtl_hsa.so
  export FI_CXI_DEVICE_NAME=cxi0
  export MPIR_CVAR_NOLOCAL=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=8 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method gpu-aware-mpi --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 45 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 46: NicPathCheck %nic=1 %method=ccl
mkdir -p inner/46 && cd inner/46 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=2,3
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
  export FI_CXI_DEVICE_NAME=cxi1
  export NCCL_P2P_DISABLE=1
  export NCCL_SHM_DISABLE=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/lumi.md --plugin aws-ofi-nccl/1.18.0-rocm --net-plugin librccl-net.so || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=8 --cpu-bind=mask_cpu:fe0000,fe000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method ccl --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 46 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 47: NicPathCheck %nic=1 %method=gpu-aware-mpi
mkdir -p inner/47 && cd inner/47 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=2,3
  export MPICH_GPU_SUPPORT_ENABLED=1
  export LD_PRELOAD=${CRAY_MPICH_ROOTDIR}/gtl/lib/libmpi_gtl_hsa.so
  export FI_CXI_DEVICE_NAME=cxi1
  export MPIR_CVAR_NOLOCAL=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=8 --cpu-bind=mask_cpu:fe0000,fe000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method gpu-aware-mpi --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 47 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 48: NicPathCheck %nic=2 %method=ccl
mkdir -p inner/48 && cd inner/48 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=4,5
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
  export FI_CXI_DEVICE_NAME=cxi2
  export NCCL_P2P_DISABLE=1
  export NCCL_SHM_DISABLE=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/lumi.md --plugin aws-ofi-nccl/1.18.0-rocm --net-plugin librccl-net.so || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=8 --cpu-bind=mask_cpu:fe,fe00 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method ccl --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 48 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 49: NicPathCheck %nic=2 %method=gpu-aware-mpi
mkdir -p inner/49 && cd inner/49 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=4,5
  export MPICH_GPU_SUPPORT_ENABLED=1
  export LD_PRELOAD=${CRAY_MPICH_ROOTDIR}/gtl/lib/libmpi_gtl_hsa.so
  export FI_CXI_DEVICE_NAME=cxi2
  export MPIR_CVAR_NOLOCAL=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=8 --cpu-bind=mask_cpu:fe,fe00 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method gpu-aware-mpi --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 49 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 50: NicPathCheck %nic=3 %method=ccl
mkdir -p inner/50 && cd inner/50 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=6,7
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
  export FI_CXI_DEVICE_NAME=cxi3
  export NCCL_P2P_DISABLE=1
  export NCCL_SHM_DISABLE=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/lumi.md --plugin aws-ofi-nccl/1.18.0-rocm --net-plugin librccl-net.so || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=8 --cpu-bind=mask_cpu:fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method ccl --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 50 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 51: NicPathCheck %nic=3 %method=gpu-aware-mpi
mkdir -p inner/51 && cd inner/51 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=6,7
  export MPICH_GPU_SUPPORT_ENABLED=1
  export LD_PRELOAD=${CRAY_MPICH_ROOTDIR}/gtl/lib/libmpi_gtl_hsa.so
  export FI_CXI_DEVICE_NAME=cxi3
  export MPIR_CVAR_NOLOCAL=1
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=8 --cpu-bind=mask_cpu:fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm bw --method gpu-aware-mpi --sizes 8,1M,64M --json gpucomm_results.json --window 8 --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 100 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 51 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# skipped: NicPathCheck %nic=4 %method=ccl: the node has 4 NIC(s): cxi0, cxi1, cxi2, cxi3
# skipped: NicPathCheck %nic=4 %method=gpu-aware-mpi: the node has 4 NIC(s): cxi0, cxi1, cxi2, cxi3
# skipped: NicPathCheck %nic=5 %method=ccl: the node has 4 NIC(s): cxi0, cxi1, cxi2, cxi3
# skipped: NicPathCheck %nic=5 %method=gpu-aware-mpi: the node has 4 NIC(s): cxi0, cxi1, cxi2, cxi3
# skipped: NicPathCheck %nic=6 %method=ccl: the node has 4 NIC(s): cxi0, cxi1, cxi2, cxi3
# skipped: NicPathCheck %nic=6 %method=gpu-aware-mpi: the node has 4 NIC(s): cxi0, cxi1, cxi2, cxi3
# skipped: NicPathCheck %nic=7 %method=ccl: the node has 4 NIC(s): cxi0, cxi1, cxi2, cxi3
# skipped: NicPathCheck %nic=7 %method=gpu-aware-mpi: the node has 4 NIC(s): cxi0, cxi1, cxi2, cxi3
# 60: PingPongCheck %method=host
mkdir -p inner/60 && cd inner/60 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method host --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pingpong --method host --sizes 1:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 60 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 61: PingPongCheck %method=staging
mkdir -p inner/61 && cd inner/61 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method staging --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pingpong --method staging --sizes 1:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 200 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 61 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 62: PingPongCheck %method=gpu-aware-mpi
mkdir -p inner/62 && cd inner/62 && (
  export GPUCOMM_BIND_ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
  export MPICH_GPU_SUPPORT_ENABLED=1
  export LD_PRELOAD=${CRAY_MPICH_ROOTDIR}/gtl/lib/libmpi_gtl_hsa.so
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method gpu-aware-mpi --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pingpong --method gpu-aware-mpi --sizes 1:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 200 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 62 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 63: PingPongCheck %method=ipc-copy
mkdir -p inner/63 && cd inner/63 && (
  export MPICH_GPU_SUPPORT_ENABLED=0
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ipc-copy --recipe docs/sites/lumi.md || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pingpong --method ipc-copy --sizes 1:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 200 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 63 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
# 64: PingPongCheck %method=ccl
mkdir -p inner/64 && cd inner/64 && (
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
  /scratch/gpucomm-venv/bin/python -m gpucomm preflight --method ccl --recipe docs/sites/lumi.md --plugin aws-ofi-nccl/1.18.0-rocm --net-plugin librccl-net.so || exit $?
  srun --ntasks=2 --ntasks-per-node=2 --gpus-per-node=2 --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 <REPO>/config/bin/gpucomm-bind /scratch/gpucomm-venv/bin/python -m gpucomm pingpong --method ccl --sizes 1:1G --json gpucomm_results.json --validate-every 1 --validate-sizes 8,1048576 --timeout 525 --max-bandwidth 200 --fit-memory
) >rfm_job.out 2>rfm_job.err
echo "GPUCOMM-NODE-CHECK 64 $?" >> "$GPUCOMM_NODE_STAGE/gpucomm_node_checks.txt"
cd "$GPUCOMM_NODE_STAGE"
true
