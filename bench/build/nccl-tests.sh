#!/usr/bin/env bash
# nccl-tests (MPI=1: one rank per GPU under mpirun, or -g N in one process) at a pinned commit.
#
#   bench/build/nccl-tests.sh DEST [SOURCE]   SOURCE: a nccl-tests-2.19.6 folder, or a tarball
#                                             with SOURCE_SHA256=its sha256; none: git clone
#                                             (versions.sh: the commit is checked)
# Environment: MPI_HOME [mpicc's prefix on PATH], CUDA_HOME [/usr/local/cuda], NCCL_HOME [the
# nvidia-nccl wheel of python3], CUDA_ARCH [GPU 0's, else 90], JOBS [nproc].
# DEST gets the *_perf binaries (static CUDA runtime; NCCL from LD_LIBRARY_PATH at run time).
. "$(dirname "$0")/lib.sh"
DEST=${1:?usage: nccl-tests.sh DEST [SOURCE]}
if [ -z "${2:-}" ]; then
  mkdir -p "$SRC_CACHE"; clone=$SRC_CACHE/nccl-tests-$NCCL_TESTS_VERSION
  [ -d "$clone/.git" ] || git clone -q "$NCCL_TESTS_GIT" "$clone" || die "nccl-tests: cannot clone $NCCL_TESTS_GIT"
  git -C "$clone" checkout -q "$NCCL_TESTS_COMMIT" || die "nccl-tests: no commit $NCCL_TESTS_COMMIT"
  [ "$(git -C "$clone" rev-parse HEAD)" = "$NCCL_TESTS_COMMIT" ] || die "nccl-tests: not at $NCCL_TESTS_COMMIT"
  src=$clone; say "nccl-tests: $NCCL_TESTS_GIT at $NCCL_TESTS_COMMIT (checked)"
else
  src=$(unpacked_source nccl-tests "$2" "" ${NCCL_TESTS_SHA256:-none})
fi
grep -q "define NCCL_TESTS_VERSION \"$NCCL_TESTS_VERSION\"" "$src/src/common.h" \
  || die "nccl-tests: $src is not $NCCL_TESTS_VERSION (src/common.h)"
MPI_HOME=${MPI_HOME:-$(dirname "$(dirname "$(command -v mpicc || die 'no mpicc: set MPI_HOME')")")}
nccl=$(nccl_home); arch=$(cuda_arch)
build=$(mktemp -d "${TMPDIR:-/tmp}/gpucomm-nccl-tests-build.XXXX")
cp -r "$src/." "$build/"
say "nccl-tests $NCCL_TESTS_VERSION: make MPI=1 in $build (MPI $MPI_HOME, NCCL $nccl, sm_$arch)"
make -C "$build" -j"$JOBS" MPI=1 MPI_HOME="$MPI_HOME" CUDA_HOME="$CUDA_HOME" NCCL_HOME="$nccl" \
  NVCC_GENCODE="-gencode=arch=compute_$arch,code=sm_$arch" > "$build/make.log" 2>&1 \
  || { grep -E 'error' "$build/make.log" | head -30; die "nccl-tests: make failed"; }
mkdir -p "$DEST"; cp "$build"/build/*_perf "$DEST/"; strip "$DEST"/*_perf 2>/dev/null || true
say "nccl-tests $NCCL_TESTS_VERSION in $DEST: $(cd "$DEST" && ls | tr '\n' ' ')"
case $src in */gpucomm-src-nccl-tests.*) rm -rf "$(dirname "$src")" ;; esac
