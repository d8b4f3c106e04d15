# Source after bench/device-env.sh on the GPU node: unpacks the native tools carried as the
# ignored ext/tools.tar.xz (OSU 7.4 and nccl-tests 2.19.6 binaries built beforehand on a CPU
# machine by the ignored ext/ scripts; see bench/results/2026-11-30-nvidia-h200-x2/README.md,
# 11-tools2) and points the checks and bench/compare at them (GPUCOMM_OSU_DIR,
# GPUCOMM_NCCL_TESTS_DIR); libnccl from the node's nvidia-nccl wheel.
_tools=${GPUCOMM_TOOLS:-/tmp/gpucomm-tools}
rm -rf "$_tools" && mkdir -p "$_tools" && tar xJf ext/tools.tar.xz -C "$_tools"
_nccl_lib=$(python3 -c "import nvidia.nccl,os;print(os.path.join(list(nvidia.nccl.__path__)[0],'lib'))")
export LD_LIBRARY_PATH="$_tools/lib:$_nccl_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GPUCOMM_OSU_DIR=$_tools/osu GPUCOMM_NCCL_TESTS_DIR=$_tools/nccl-tests
