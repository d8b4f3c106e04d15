#!/usr/bin/env bash
# From nothing to the artefacts bench/device-env.sh and bench/campaign.sh pick up from ext/:
# UCC (ucc.sh) and Open MPI with CUDA, UCX and UCC (ompi.sh), then OSU 7.4 (osu.sh) and
# nccl-tests (nccl-tests.sh) against it, in parallel, packed as
#   OUTDIR/ompi-cuda.tar.xz   the MPI with UCC, installed in GPUCOMM_MPI_PREFIX
#                             [/tmp/gpucomm-ompi-cuda]
#   OUTDIR/tools.tar.xz       osu/ (install prefix) and nccl-tests/ (*_perf), unpacked by
#                             campaign.sh into /tmp/gpucomm-tools (GPUCOMM_TOOLS)
# and OUTDIR/build-*.log (build-ucc.log: what each UCC library needs, NEEDED and RUNPATH).
#
#   bench/build/all.sh OUTDIR [OMPI_SOURCE [OSU_SOURCE [NCCL_TESTS_SOURCE]]]
#
# GPUCOMM_BUILD [mpi,tools]: what to build.  The MPI builds anywhere: without a CUDA toolkit
# (no CUDA_HOME/include/cuda.h: the CPU machine, CI) against the CUDA headers and a link-time
# driver stub (cuda-host.sh, from NVIDIA's wheels).  UCX: OMPI_WITH_UCX, else the libucx-cu13
# wheel's (ucx-prefix.sh; UCX_WHEEL: that wheel file, else downloaded); OMPI_WITH_UCX= (empty)
# builds without UCX (pml ob1 + btl smcuda).  UCC 1.8.0 (coll/ucc: reductions of device buffers
# on the GPUs, enabled at run time with --mca coll_ucc_enable 1 --mca coll_ucc_priority 100) is
# built into the MPI prefix first (ucc.sh: needs UCX, nvcc, nvml.h and autotools; NCCL headers
# from the nvidia-nccl-cu13 wheel, NCCL_WHEEL or pip-downloaded; CUDA_ARCH [90]); its source:
# UCC_SOURCE (a folder or tarball, as ucc.sh takes it; none: git clone at the pinned commit).
# OMPI_WITH_UCC= (empty) builds without UCC; OMPI_WITH_UCC=DIR takes the UCC installed in DIR
# (packed only when DIR is the MPI prefix).  The tools need nvcc (CUDA_HOME/bin/nvcc: a GPU
# node's toolkit, or one assembled from NVIDIA's wheels, whose missing libcuda stub cuda-host.sh
# makes: CUDA_STUBS) and NCCL (python3's nvidia-nccl wheel, else NCCL_HOME or NCCL_WHEEL, else
# downloaded: lib.sh nccl_home).
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
work=$(mktemp -d "${TMPDIR:-/tmp}/gpucomm-build-deps.XXXX"); trap 'rm -rf "$work"' EXIT
toolkit=$CUDA_HOME
if [[ ",$WHAT," == *,tools,* ]]; then
  [ -x "$CUDA_HOME/bin/nvcc" ] || die "the tools need nvcc (none at CUDA_HOME=$CUDA_HOME): set CUDA_HOME to a CUDA toolkit, or GPUCOMM_BUILD=mpi"
fi
if [[ ",$WHAT," == *,tools,* ]] || { [[ ",$WHAT," == *,mpi,* ]] && [ -z "${OMPI_WITH_UCC+set}" ]; }; then
  # NCCL once for UCC and both tools (a download lands in $work)
  NCCL_HOME=$(TMPDIR=$work nccl_home); export NCCL_HOME
fi
if [[ ",$WHAT," == *,mpi,* ]]; then
  : > "$OUT/build-ompi.log"
  with_ucc=yes; [ -n "${OMPI_WITH_UCC+set}" ] && with_ucc=no
  if [ $with_ucc = yes ] && [ -n "${OMPI_WITH_UCX+set}" ] && [ -z "$OMPI_WITH_UCX" ]; then
    die "UCC needs UCX: OMPI_WITH_UCX= (no UCX) needs OMPI_WITH_UCC= (no UCC) too"
  fi
  # a CUDA toolkit needs cuda.h and the driver library or its stub (UCC: nvml.h and the NVML
  # library or its stub too); a toolkit assembled from NVIDIA's wheels (nvcc, no driver stub)
  # gets cuda-host.sh's instead
  no_nvml() { [ ! -f "$CUDA_HOME/include/nvml.h" ] || { [ ! -e "$CUDA_HOME/lib64/stubs/libnvidia-ml.so" ] && [ ! -e "$CUDA_HOME/lib64/libnvidia-ml.so" ]; }; }
  if [ ! -f "$CUDA_HOME/include/cuda.h" ] || { [ ! -e "$CUDA_HOME/lib64/stubs/libcuda.so" ] && [ ! -e "$CUDA_HOME/lib64/libcuda.so" ]; } \
     || { [ $with_ucc = yes ] && no_nvml; }; then
    "$BUILD_DIR/cuda-host.sh" "$work/cuda" ${CUDA_WHEELS:-} >> "$OUT/build-ompi.log" 2>&1 \
      || { tail -n 5 "$OUT/build-ompi.log"; die "no CUDA headers"; }
    export CUDA_HOME=$work/cuda
  fi
  if [ -z "${OMPI_WITH_UCX+set}" ]; then
    "$BUILD_DIR/ucx-prefix.sh" "$work/ucx" ${UCX_WHEEL:-} >> "$OUT/build-ompi.log" 2>&1 \
      || { tail -n 5 "$OUT/build-ompi.log"; die "no UCX"; }
    export OMPI_WITH_UCX=$work/ucx
  fi
  if [ $with_ucc = yes ]; then
    "$BUILD_DIR/ucc.sh" "$MPI_PREFIX" "${UCC_SOURCE:-}" > "$OUT/build-ucc.log" 2>&1 || { tail -n 40 "$OUT/build-ucc.log"; die "UCC failed"; }
    tail -n 1 "$OUT/build-ucc.log"
    export OMPI_WITH_UCC=$MPI_PREFIX
  fi
  "$BUILD_DIR/ompi.sh" "$MPI_PREFIX" "${2:-}" >> "$OUT/build-ompi.log" 2>&1 || { tail -n 40 "$OUT/build-ompi.log"; die "Open MPI failed"; }
  tail -n 3 "$OUT/build-ompi.log"
  XZ_OPT=${XZ_OPT:--T0} tar cJf "$OUT/ompi-cuda.tar.xz" -C "$MPI_PREFIX" .
  say "packed $OUT/ompi-cuda.tar.xz"
  [[ ",$WHAT," == *,tools,* ]] || { ls -l "$OUT"/*.tar.xz; exit 0; }
fi
# the tools: nvcc of the toolkit; a toolkit without the driver library or its stub (one
# assembled from NVIDIA's wheels, as on the CPU machine) links OSU against cuda-host.sh's stub
export CUDA_HOME=$toolkit
if [ -z "${CUDA_STUBS:-}" ] && [ ! -e "$CUDA_HOME/lib64/stubs/libcuda.so" ] && [ ! -e "$CUDA_HOME/lib64/libcuda.so" ]; then
  [ -e "$work/cuda/lib64/stubs/libcuda.so" ] || "$BUILD_DIR/cuda-host.sh" "$work/cuda" ${CUDA_WHEELS:-} > "$OUT/build-cuda-stubs.log" 2>&1 \
    || { tail -n 5 "$OUT/build-cuda-stubs.log"; die "no libcuda stub for the tools"; }
  export CUDA_STUBS=$work/cuda/lib64/stubs
fi
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
