#!/usr/bin/env bash
# OSU Micro-Benchmarks 7.4 with CUDA (-d cuda) and the NCCL benchmarks (osu_xccl_*), patched
# for CUDA 13.
#
#   bench/build/osu.sh PREFIX [SOURCE]     SOURCE: osu-micro-benchmarks-7.4 tarball or folder;
#                                          none: download (versions.sh: URL, sha256 checked)
# Environment: MPI_HOME [mpicc's prefix on PATH] (bench/build/ompi.sh's prefix for -d cuda
# collectives), CUDA_HOME [/usr/local/cuda], CUDA_STUBS [CUDA_HOME/lib64/stubs: where libcuda.so
# is at link time], NCCL_HOME [lib.sh nccl_home: python3's nvidia-nccl wheel, else downloaded],
# CUDA_ARCH [GPU 0's, else 90], JOBS [nproc].
#
# The CUDA 13 fix: CUDA 13 dropped cudaMemPrefetchAsync(ptr, size, int device, stream) for
# (ptr, size, cudaMemLocation, flags, stream); OSU 7.4's prefetch_data() (c/util/osu_util_mpi.c,
# managed memory only) calls the old one and the build stops there ("too few arguments to
# function 'cudaMemPrefetchAsync'", bench/results/2026-11-30-nvidia-h200-x2/06-native).  The
# patch calls the new one where CUDART_VERSION >= 13000, the same prefetch (device, or the
# host for cudaCpuDeviceId).
. "$(dirname "$0")/lib.sh"
PREFIX=${1:?usage: osu.sh PREFIX [SOURCE]}
src=$(unpacked_source osu "${2:-}" "$OSU_URL" "$OSU_SHA256" ${OSU_EXTRA_SHA256:-})
grep -q "PACKAGE_VERSION='$OSU_VERSION'" "$src/configure" || die "osu: $src is not $OSU_VERSION"
MPI_HOME=${MPI_HOME:-$(dirname "$(dirname "$(command -v mpicc || die 'no mpicc: set MPI_HOME')")")}
nccl=$(nccl_home); arch=$(cuda_arch)
util=$src/c/util/osu_util_mpi.c
old='    CUDA_CHECK(cudaMemPrefetchAsync(buf, length, devid, um_stream));'
if grep -qF "$old" "$util"; then
  python3 - "$util" "$old" <<'PY'
import sys
path, old = sys.argv[1], sys.argv[2]
new = """#if defined(CUDART_VERSION) && CUDART_VERSION >= 13000
    {   /* gpucomm bench/build/osu.sh: CUDA 13 takes a cudaMemLocation */
        struct cudaMemLocation loc;
        loc.type = devid == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
        loc.id = devid == cudaCpuDeviceId ? 0 : devid;
        CUDA_CHECK(cudaMemPrefetchAsync(buf, length, loc, 0, um_stream));
    }
#else
""" + old + "\n#endif"
text = open(path).read()
open(path, "w").write(text.replace(old, new, 1))
PY
  say "osu: CUDA 13 patch applied to c/util/osu_util_mpi.c (prefetch_data)"
else
  grep -q 'gpucomm bench/build/osu.sh' "$util" || die "osu: $util has no line to patch (not 7.4?)"
fi
build=$(mktemp -d "${TMPDIR:-/tmp}/gpucomm-osu-build.XXXX")
say "osu $OSU_VERSION: configure in $build (MPI $MPI_HOME, CUDA $CUDA_HOME, NCCL $nccl, sm_$arch)"
cd "$build"
"$src/configure" --prefix="$PREFIX" CC="$MPI_HOME/bin/mpicc" CXX="$MPI_HOME/bin/mpicxx" \
  --enable-cuda --with-cuda="$CUDA_HOME" --enable-ncclomb --with-nccl="$nccl" \
  NVCCFLAGS="-gencode=arch=compute_$arch,code=sm_$arch" \
  LDFLAGS="-L${CUDA_STUBS:-$CUDA_HOME/lib64/stubs} -lrt" > configure.log 2>&1 \
  || { tail -30 configure.log; die "osu: configure failed"; }
make -j"$JOBS" > make.log 2>&1 || { grep -E 'error' make.log | head -30; die "osu: make failed"; }
make install > install.log 2>&1 || { tail -20 install.log; die "osu: make install failed"; }
strip_prefix "$PREFIX"
n=$(find "$PREFIX/libexec" -type f -name 'osu_*' | wc -l)
for b in osu_latency osu_bw osu_allreduce osu_alltoall osu_xccl_allreduce; do
  find "$PREFIX/libexec" -type f -name "$b" | grep -q . || die "osu: $b not built"
done
say "osu $OSU_VERSION installed in $PREFIX: $n benchmarks; build logs in $build"
case $src in */gpucomm-src-osu.*) rm -rf "$(dirname "$src")" ;; esac
