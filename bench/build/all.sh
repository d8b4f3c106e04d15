#!/usr/bin/env bash
# From nothing to the artefacts bench/device-env.sh and bench/campaign.sh pick up from ext/:
# Open MPI with CUDA and UCX (ompi.sh), then OSU 7.4 (osu.sh) and nccl-tests (nccl-tests.sh)
# against it, in parallel, packed as
#   OUTDIR/ompi-cuda.tar.xz   the MPI, installed in GPUCOMM_MPI_PREFIX [/tmp/gpucomm-ompi-cuda]
#   OUTDIR/tools.tar.xz       osu/ (install prefix) and nccl-tests/ (*_perf), unpacked by
#                             campaign.sh into /tmp/gpucomm-tools (GPUCOMM_TOOLS)
# and OUTDIR/build-*.log.
#
#   bench/build/all.sh OUTDIR [OMPI_SOURCE [OSU_SOURCE [NCCL_TESTS_SOURCE]]]
#
# GPUCOMM_BUILD [mpi,tools]: what to build.  The MPI builds anywhere: without a CUDA toolkit
# (no CUDA_HOME/include/cuda.h: the CPU machine, CI) against the CUDA headers and a link-time
# driver stub (cuda-host.sh, from NVIDIA's wheels).  UCX: OMPI_WITH_UCX, else the libucx-cu13
# wheel's (ucx-prefix.sh; UCX_WHEEL: that wheel file, else downloaded); OMPI_WITH_UCX= (empty)
# builds without UCX (pml ob1 + btl smcuda).  The tools need nvcc and NCCL (a GPU node: CUDA
# toolkit, python3 with the nvidia-nccl wheel).
#
# Sources: as each script takes them (a tarball, checked; a folder; none: downloaded).  The
# prefixes are where the installs run later: build where they will run, or keep the defaults.
. "$(dirname "$0")/lib.sh"
OUT=${1:?usage: all.sh OUTDIR [OMPI_SOURCE [OSU_SOURCE [NCCL_TESTS_SOURCE]]]}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
MPI_PREFIX=${GPUCOMM_MPI_PREFIX:-/tmp/gpucomm-ompi-cuda}
TOOLS=${GPUCOMM_TOOLS:-/tmp/gpucomm-tools}
WHAT=${GPUCOMM_BUILD:-mpi,tools}
case ",$WHAT," in *,mpi,*|*,tools,*) ;; *) die "GPUCOMM_BUILD=$WHAT: expected mpi, tools or both (comma-separated)" ;; esac
t0=$(date +%s)
work=$(mktemp -d "${TMPDIR:-/tmp}/gpucomm-build-deps.XXXX")
if [[ ",$WHAT," == *,tools,* ]]; then
  [ -x "$CUDA_HOME/bin/nvcc" ] || die "the tools need nvcc (none at CUDA_HOME=$CUDA_HOME): build them on a GPU node, or GPUCOMM_BUILD=mpi"
fi
if [[ ",$WHAT," == *,mpi,* ]]; then
  : > "$OUT/build-ompi.log"
  # a CUDA toolkit needs cuda.h and the driver library or its stub; a toolkit assembled from
  # NVIDIA's wheels (nvcc, no driver stub) gets cuda-host.sh's instead
  if [ ! -f "$CUDA_HOME/include/cuda.h" ] || { [ ! -e "$CUDA_HOME/lib64/stubs/libcuda.so" ] && [ ! -e "$CUDA_HOME/lib64/libcuda.so" ]; }; then
    "$BUILD_DIR/cuda-host.sh" "$work/cuda" ${CUDA_WHEELS:-} >> "$OUT/build-ompi.log" 2>&1 \
      || { tail -n 5 "$OUT/build-ompi.log"; die "no CUDA headers"; }
    export CUDA_HOME=$work/cuda
  fi
  if [ -z "${OMPI_WITH_UCX+set}" ]; then
    "$BUILD_DIR/ucx-prefix.sh" "$work/ucx" ${UCX_WHEEL:-} >> "$OUT/build-ompi.log" 2>&1 \
      || { tail -n 5 "$OUT/build-ompi.log"; die "no UCX"; }
    export OMPI_WITH_UCX=$work/ucx
  fi
  "$BUILD_DIR/ompi.sh" "$MPI_PREFIX" "${2:-}" >> "$OUT/build-ompi.log" 2>&1 || { tail -n 40 "$OUT/build-ompi.log"; die "Open MPI failed"; }
  tail -n 3 "$OUT/build-ompi.log"
  XZ_OPT=${XZ_OPT:--T0} tar cJf "$OUT/ompi-cuda.tar.xz" -C "$MPI_PREFIX" .
  say "packed $OUT/ompi-cuda.tar.xz"
  [[ ",$WHAT," == *,tools,* ]] || { rm -rf "$work"; ls -l "$OUT"/*.tar.xz; exit 0; }
fi
rm -rf "$work"
export MPI_HOME=${MPI_HOME:-$MPI_PREFIX} PATH=${MPI_HOME:-$MPI_PREFIX}/bin:$PATH
"$BUILD_DIR/osu.sh" "$TOOLS/osu" "${3:-}" > "$OUT/build-osu.log" 2>&1 & osu=$!
"$BUILD_DIR/nccl-tests.sh" "$TOOLS/nccl-tests" "${4:-}" > "$OUT/build-nccl-tests.log" 2>&1 & nt=$!
rc=0
wait $osu || { tail -n 30 "$OUT/build-osu.log"; rc=1; }
wait $nt || { tail -n 30 "$OUT/build-nccl-tests.log"; rc=1; }
tail -n 1 "$OUT/build-osu.log"; tail -n 1 "$OUT/build-nccl-tests.log"
say "builds: $(( $(date +%s) - t0 )) s"
[ $rc = 0 ] && tar cJf "$OUT/tools.tar.xz" -C "$TOOLS" osu nccl-tests
ls -l "$OUT"/*.tar.xz
exit $rc
