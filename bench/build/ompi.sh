#!/usr/bin/env bash
# Open MPI with CUDA, GPU-aware for point-to-point AND collectives on device buffers.
#
#   bench/build/ompi.sh PREFIX [SOURCE]     SOURCE: openmpi-5.0.7 tarball or unpacked folder;
#                                           none: download (versions.sh: URL, sha256 checked)
# Environment: CUDA_HOME [/usr/local/cuda], JOBS [nproc], OMPI_WITH_UCX [none: a UCX install
# prefix, e.g. bench/build/ucx-prefix.sh's from the libucx-cu13 wheel: adds pml ucx, and UCX's
# libraries (with what they need) and modules are copied into PREFIX/lib and PREFIX/lib/ucx so
# that the install stands alone],
# OMPI_WITH_UCC [none: a UCC install prefix, bench/build/ucc.sh's, normally PREFIX itself (all.sh):
# adds coll/ucc, off unless asked for at run time:
# --mca coll_ucc_enable 1 --mca coll_ucc_priority 100],
# OMPI_NO_BUILD [MPI-IO, monitoring and btl uct: components never used here, a shorter build],
# OMPI_CONFIGURE_EXTRA.
#
# Transports: with OMPI_WITH_UCX (all.sh's default: the libucx-cu13 wheel's UCX, ucx-prefix.sh),
# pml ucx moves device memory between the GPUs of a node through CUDA IPC (cuda_ipc) at NVLink
# speed; the local config probes it first (siteconf.gpu_aware_candidates: --mca pml ucx).
# Reductions of device buffers go through host memory (coll/cuda) unless coll/ucc is built and
# enabled (OMPI_WITH_UCC: UCC's tl/nccl, or tl/ucp with ec/cuda kernels, reduce on the GPUs).
# Without UCX: pml ob1 with btl smcuda, which on the 2x H200 node moved device memory through the
# host (cuMemHostRegister of its segment failed: 18-cuda-mpi, 21-every-method).
# CUDA: CUDA_HOME with include/cuda.h and the driver library or its stub (lib64/stubs); on a
# machine without CUDA, bench/build/cuda-host.sh makes one from NVIDIA's wheels.
# --disable-nvml --disable-cuda reach only the internal hwloc (Open MPI's CUDA support is
# --with-cuda): no hwloc_nvml/hwloc_cuda plugins, which would open NVML and the CUDA runtime in
# every process at MPI_Init; cuda-host.sh's CUDA_HOME (nvml.h, libcudart for UCC) would build them.
# Installed stripped, without static libraries, docs or man pages.  Prefix is where it will
# run (Open MPI 5 relocates with OPAL_PREFIX, but a fixed prefix needs nothing).
. "$(dirname "$0")/lib.sh"
PREFIX=${1:?usage: ompi.sh PREFIX [SOURCE]}
src=$(unpacked_source openmpi "${2:-}" "$OMPI_URL" "$OMPI_SHA256" "$OMPI_DEBIAN_SHA256")
grep -q "^release=${OMPI_VERSION##*.}$" "$src/VERSION" || die "openmpi: $src is not $OMPI_VERSION"
# upstream fixes from the v5.0.x branch after the release, as Spack applies them
# (patches/openmpi-VERSION-*.patch, each a `git format-patch` of the upstream commit it names);
# a source folder of the caller's is patched in a copy, never in place
for p in "$BUILD_DIR"/patches/openmpi-"$OMPI_VERSION"-*.patch; do
  [ -e "$p" ] || continue
  if patch -d "$src" -p1 -R -s -f --dry-run < "$p" > /dev/null 2>&1; then
    say "openmpi: $(basename "$p") already in $src"; continue
  fi
  case $src in
    */gpucomm-src-openmpi.*) ;;
    *) copy=$(mktemp -d "${TMPDIR:-/tmp}/gpucomm-src-openmpi.XXXX"); cp -a "$src" "$copy/"; src=$copy/$(basename "$src") ;;
  esac
  patch -d "$src" -p1 -s -f < "$p" > /dev/null || die "openmpi: $(basename "$p") does not apply to $src"
  say "openmpi: applied $(basename "$p")"
done
[ -x "$CUDA_HOME/bin/nvcc" ] || [ -f "$CUDA_HOME/include/cuda.h" ] || die "no CUDA at CUDA_HOME=$CUDA_HOME"
cudalib=$CUDA_HOME/lib64/stubs; [ -e "$cudalib/libcuda.so" ] || cudalib=$CUDA_HOME/lib64
[ -e "$cudalib/libcuda.so" ] || die "no libcuda.so (nor lib64/stubs/libcuda.so) in CUDA_HOME=$CUDA_HOME: bench/build/cuda-host.sh DIR makes a CUDA_HOME with its stub"
ucx=(--without-ucx); [ -n "${OMPI_WITH_UCX:-}" ] && ucx=(--with-ucx="$OMPI_WITH_UCX")
ucc=(--without-ucc); [ -n "${OMPI_WITH_UCC:-}" ] && ucc=(--with-ucc="$OMPI_WITH_UCC")
if [ -n "${OMPI_WITH_UCC:-}" ]; then
  [ -f "$OMPI_WITH_UCC/include/ucc/api/ucc.h" ] || die "openmpi: no include/ucc/api/ucc.h in OMPI_WITH_UCC=$OMPI_WITH_UCC (bench/build/ucc.sh PREFIX installs UCC)"
fi
build=$(mktemp -d "${TMPDIR:-/tmp}/gpucomm-ompi-build.XXXX")
say "openmpi $OMPI_VERSION: configure in $build (CUDA $CUDA_HOME, libcuda from $cudalib, ${ucx[*]} ${ucc[*]})"
cd "$build"
"$src/configure" --prefix="$PREFIX" \
  --with-cuda="$CUDA_HOME" --with-cuda-libdir="$cudalib" "${ucx[@]}" \
  "${ucc[@]}" --without-ofi --without-hcoll --without-psm2 --disable-nvml --disable-cuda \
  --disable-mpi-fortran --disable-oshmem --disable-io-romio --disable-static --disable-sphinx \
  --with-pmix=internal --with-prrte=internal --with-hwloc=internal --with-libevent=internal \
  --enable-mca-no-build="${OMPI_NO_BUILD-io,fs,fbtl,fcoll,sharedfp,vprotocol,coll-monitoring,pml-monitoring,pml-v,btl-uct}" \
  --disable-dependency-tracking ${OMPI_CONFIGURE_EXTRA:-} > configure.log 2>&1 || { tail -40 configure.log; die "openmpi: configure failed"; }
# a CUDA configure that found no usable CUDA still succeeds: stop here, not after the build
grep -q "^checking if MCA component accelerator:cuda can compile... yes" configure.log \
  || { grep -B14 "^checking if MCA component accelerator:cuda can compile" configure.log | tail -15; die "openmpi: configure found no usable CUDA in $CUDA_HOME (configure.log above)"; }
if [ -n "${OMPI_WITH_UCX:-}" ]; then
  grep -q "^checking if MCA component pml:ucx can compile... yes" configure.log || die "openmpi: configure cannot build pml ucx with $OMPI_WITH_UCX"
fi
if [ -n "${OMPI_WITH_UCC:-}" ]; then
  grep -q "^checking if MCA component coll:ucc can compile... yes" configure.log || die "openmpi: configure cannot build coll ucc with OMPI_WITH_UCC=$OMPI_WITH_UCC (configure.log in $build)"
fi
say "openmpi: make -j$JOBS"
make -j"$JOBS" > make.log 2>&1 || { grep -E 'error|Error' make.log | head -30; tail -20 make.log; die "openmpi: make failed"; }
make install > install.log 2>&1 || { tail -20 install.log; die "openmpi: make install failed"; }
strip_prefix "$PREFIX"
if [ -n "${OMPI_WITH_UCX:-}" ]; then
  # UCX's libraries with what they need beside them (ucx-prefix.sh: the wheel's CUDA runtime)
  cp -a "$OMPI_WITH_UCX"/lib/lib*.so* "$PREFIX/lib/" && mkdir -p "$PREFIX/lib/ucx" \
    && cp -a "$OMPI_WITH_UCX"/lib/ucx/*.so* "$PREFIX/lib/ucx/" || die "openmpi: cannot copy UCX from $OMPI_WITH_UCX"
  say "openmpi: UCX libraries and modules copied into $PREFIX/lib"
fi
"$PREFIX/bin/ompi_info" 2>/dev/null | grep -E 'MCA (pml|btl|accelerator)|MCA coll: (cuda|ucc)' | awk '{print $2 $3}' | tr '\n' ' '; echo
if [ -n "${OMPI_WITH_UCC:-}" ]; then
  "$PREFIX/bin/ompi_info" 2>/dev/null | grep -q 'MCA coll: ucc' || die "openmpi: built without coll ucc (ompi_info)"
fi
"$PREFIX/bin/ompi_info" --parsable --all 2>/dev/null | grep -q 'mpi_built_with_cuda_support:value:true' \
  || die "openmpi: built without CUDA support (ompi_info)"
say "openmpi $OMPI_VERSION with CUDA installed in $PREFIX ($(du -sh "$PREFIX" | cut -f1)); build logs in $build"
case $src in */gpucomm-src-openmpi.*) rm -rf "$(dirname "$src")" ;; esac
