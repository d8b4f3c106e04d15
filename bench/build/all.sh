#!/usr/bin/env bash
# From nothing to the artefacts bench/device-env.sh and bench/campaign.sh pick up from ext/:
# Open MPI with CUDA (ompi.sh), then OSU 7.4 (osu.sh) and nccl-tests (nccl-tests.sh) against it,
# in parallel, packed as
#   OUTDIR/ompi-cuda.tar.xz   the MPI, installed in GPUCOMM_MPI_PREFIX [/tmp/gpucomm-ompi-cuda]
#   OUTDIR/tools.tar.xz       osu/ (install prefix) and nccl-tests/ (*_perf), unpacked by
#                             campaign.sh into /tmp/gpucomm-tools (GPUCOMM_TOOLS)
# and OUTDIR/build-*.log.  On a GPU node (CUDA toolkit, python3 with the nvidia-nccl wheel):
#
#   bench/build/all.sh OUTDIR [OMPI_SOURCE [OSU_SOURCE [NCCL_TESTS_SOURCE]]]
#
# Sources: as each script takes them (a tarball, checked; a folder; none: downloaded).  The
# prefixes are where the installs run later: build where they will run, or keep the defaults.
. "$(dirname "$0")/lib.sh"
OUT=${1:?usage: all.sh OUTDIR [OMPI_SOURCE [OSU_SOURCE [NCCL_TESTS_SOURCE]]]}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
MPI_PREFIX=${GPUCOMM_MPI_PREFIX:-/tmp/gpucomm-ompi-cuda}
TOOLS=${GPUCOMM_TOOLS:-/tmp/gpucomm-tools}
t0=$(date +%s)
"$BUILD_DIR/ompi.sh" "$MPI_PREFIX" "${2:-}" > "$OUT/build-ompi.log" 2>&1 || { tail -n 40 "$OUT/build-ompi.log"; die "Open MPI failed"; }
tail -n 3 "$OUT/build-ompi.log"
export MPI_HOME=$MPI_PREFIX PATH=$MPI_PREFIX/bin:$PATH
"$BUILD_DIR/osu.sh" "$TOOLS/osu" "${3:-}" > "$OUT/build-osu.log" 2>&1 & osu=$!
"$BUILD_DIR/nccl-tests.sh" "$TOOLS/nccl-tests" "${4:-}" > "$OUT/build-nccl-tests.log" 2>&1 & nt=$!
rc=0
wait $osu || { tail -n 30 "$OUT/build-osu.log"; rc=1; }
wait $nt || { tail -n 30 "$OUT/build-nccl-tests.log"; rc=1; }
tail -n 1 "$OUT/build-osu.log"; tail -n 1 "$OUT/build-nccl-tests.log"
say "builds: $(( $(date +%s) - t0 )) s"
tar cJf "$OUT/ompi-cuda.tar.xz" -C "$MPI_PREFIX" .
[ $rc = 0 ] && tar cJf "$OUT/tools.tar.xz" -C "$TOOLS" osu nccl-tests
ls -l "$OUT"/*.tar.xz
exit $rc
