#!/usr/bin/env bash
# UCC 1.8.0 (Unified Collective Communication) with CUDA, NCCL and UCX, for Open MPI's coll/ucc
# (ompi.sh with OMPI_WITH_UCC=PREFIX): collectives of device buffers on the GPUs (tl/nccl, tl/cuda
# over CUDA IPC, tl/ucp with ec/cuda kernels) instead of coll/cuda's host staging.
#
#   bench/build/ucc.sh PREFIX [SOURCE]     SOURCE: a UCC folder (a git clone: its HEAD must be
#                                          UCC_COMMIT), or a tarball made by `git archive` of the
#                                          tag (GitHub's are: the commit it carries must be
#                                          UCC_COMMIT; any other: UCC_SOURCE_SHA256=its sha256);
#                                          none: git clone of UCC_GIT at UCC_COMMIT (versions.sh,
#                                          checked) into ext/src/
# Requires: autoconf, automake and libtool for a source without configure (git: ./autogen.sh;
# Debian: apt-get install autoconf automake libtool), a C/C++17 compiler, nvcc (CUDA 12 or 13).
# Environment: UCC_WITH_UCX [OMPI_WITH_UCX]: the UCX prefix (required; ucx-prefix.sh's);
# CUDA_HOME [/usr/local/cuda]: include/cuda.h and nvml.h, lib64/libcudart.so, libcuda.so and
# libnvidia-ml.so (or their stubs in lib64/stubs): cuda-host.sh makes one, without them UCC
# disables TL CUDA (this script stops then); NVCC [CUDA_HOME/bin/nvcc, else nvcc on PATH];
# NCCL_HOME [include/nccl.h, lib/libnccl.so; else NCCL_WHEEL (an nvidia_nccl_cu13 wheel file),
# else python3's nvidia.nccl, else nvidia-nccl-cu13==NCCL_WHEEL_VERSION pip-downloaded];
# CUDA_ARCH [GPU 0's, else 90: sm_90 and compute_90 PTX; a list "80 90" for A100 sites as well];
# JOBS [nproc]; UCC_CONFIGURE_EXTRA.
# NVLS (NVLink SHARP, tl/cuda's only all-reduce) is configured out (--with-nvls=no) and checked
# absent: it calls cuMulticastCreate, which the GPU hosts here forbid (NVLink multicast can put
# the shared GPUs out of service; NCCL_NVLS_ENABLE=0 likewise).  tl/cuda thus serves all-gather,
# all-to-all, broadcast and reduce-scatter; all-reduce of device buffers goes to tl/nccl (or
# tl/ucp: UCX cuda_ipc and ec/cuda kernels).
#
# The install stands alone in PREFIX (the Open MPI prefix in all.sh: ompi-cuda.tar.xz carries
# both), with one RUNPATH relative to $ORIGIN only ($ORIGIN:$ORIGIN/..:$ORIGIN/../lib: lib/,
# lib/ucc/ and bin/ alike, all inside PREFIX).  Beside them: UCX's libraries and modules in
# PREFIX/lib (as ompi.sh copies them), and CUDA_HOME's CUDA runtime libcudart.so.13 in
# PREFIX/lib/ucc, next to the components that need it and off LD_LIBRARY_PATH (device-env.sh puts
# PREFIX/lib there: a libcudart.so.13 in it would shadow the python packages' own).  What each
# needs at run time (readelf -d of the 1.8.0 build, 2026-12-01-cpu-2core/06-ucc-build):
#   libucc.so.1                           libucs.so.0 (PREFIX/lib)
#   libucc_tl_ucp.so                      libucc.so.1, libucp.so.0, libucs.so.0 (PREFIX/lib)
#   libucc_tl_self, _cl_basic, _cl_hier,  libucc.so.1, libucs.so.0
#     _mc_cpu, _ec_cpu
#   libucc_tl_cuda.so                     libucc, libucs, libcudart.so.13 (lib/ucc); libcuda.so.1
#                                         and libnvidia-ml.so.1 (the node's driver)
#   libucc_mc_cuda.so, libucc_ec_cuda.so  libucc, libucs, libcudart.so.13; libcuda.so.1 (driver);
#                                         ec_cuda libstdc++.so.6 (the system's)
#   libucc_sysinfo_cuda.so                libucc; libcuda.so.1, libnvidia-ml.so.1 (driver)
#   libucc_tl_nccl.so                     libucc, libucs, libcudart.so.13, libcuda.so.1 and
#                                         libnccl.so.2: NOT copied (about 200 MB): at run time the
#                                         python nvidia-nccl wheel's, on LD_LIBRARY_PATH
#                                         (site-packages/nvidia/nccl/lib); without it tl/nccl does
#                                         not load and UCC goes on without it
# The build log lists the NEEDED and RUNPATH of every installed object.
. "$(dirname "$0")/lib.sh"
PREFIX=${1:?usage: ucc.sh PREFIX [SOURCE]}
mkdir -p "$PREFIX"; PREFIX=$(cd "$PREFIX" && pwd)

# --- source
if [ -z "${2:-}" ]; then
  mkdir -p "$SRC_CACHE"; clone=$SRC_CACHE/ucc-$UCC_VERSION
  [ -d "$clone/.git" ] || git clone -q "$UCC_GIT" "$clone" || die "ucc: cannot clone $UCC_GIT (no network? pass a source folder or tarball)"
  git -C "$clone" checkout -q "$UCC_COMMIT" || die "ucc: no commit $UCC_COMMIT in $clone"
  [ "$(git -C "$clone" rev-parse HEAD)" = "$UCC_COMMIT" ] || die "ucc: $clone not at $UCC_COMMIT"
  src=$clone; say "ucc: $clone (from $(git -C "$clone" remote get-url origin)) at $UCC_COMMIT (checked)"
elif [ -d "$2" ]; then
  src=$(cd "$2" && pwd)
  if [ -e "$src/.git" ]; then
    [ "$(git -C "$src" rev-parse HEAD)" = "$UCC_COMMIT" ] || die "ucc: $src is at $(git -C "$src" rev-parse HEAD), not $UCC_COMMIT (v$UCC_VERSION)"
    say "ucc: source folder $src at $UCC_COMMIT (checked)"
  else
    say "ucc: source folder $src (no git: taken as it is)"
  fi
else
  [ -f "$2" ] || die "ucc: $2: no such file or folder"
  got=$( (gzip -dc "$2" 2>/dev/null || xz -dc "$2" 2>/dev/null || cat "$2") | git get-tar-commit-id 2>/dev/null || true)
  if [ "$got" = "$UCC_COMMIT" ]; then
    say "ucc: $2 is git archive of $UCC_COMMIT (checked)"
    d=$(mktemp -d "${TMPDIR:-/tmp}/gpucomm-src-ucc.XXXX"); tar xf "$2" -C "$d"
    src=$(find "$d" -mindepth 1 -maxdepth 1 -type d | head -1); [ -n "$src" ] || die "ucc: $2 holds no folder"
  else
    [ -z "$got" ] || die "ucc: $2 is git archive of $got, not $UCC_COMMIT (v$UCC_VERSION)"
    [ -n "${UCC_SOURCE_SHA256:-}" ] || die "ucc: $2 carries no git commit id: UCC_SOURCE_SHA256=its sha256 to build it knowingly"
    SOURCE_SHA256=""; src=$(unpacked_source ucc "$2" "" "$UCC_SOURCE_SHA256")
  fi
fi
v=(${UCC_VERSION//./ })
grep -q "define(\[ucc_ver_major\], ${v[0]})" "$src/configure.ac" && grep -q "define(\[ucc_ver_minor\], ${v[1]})" "$src/configure.ac" \
  && grep -q "define(\[ucc_ver_patch\], ${v[2]})" "$src/configure.ac" || die "ucc: $src is not UCC $UCC_VERSION (configure.ac)"

# --- what it builds against
ucx=${UCC_WITH_UCX:-${OMPI_WITH_UCX:-}}
[ -n "$ucx" ] && [ -f "$ucx/include/ucp/api/ucp.h" ] || die "ucc: needs UCX: UCC_WITH_UCX or OMPI_WITH_UCX=a UCX prefix (bench/build/ucx-prefix.sh DIR makes one)"
cudalib=$CUDA_HOME/lib64; [ -d "$cudalib" ] || cudalib=$CUDA_HOME/lib
for f in include/cuda.h include/nvml.h; do
  [ -f "$CUDA_HOME/$f" ] || die "ucc: no $f in CUDA_HOME=$CUDA_HOME (bench/build/cuda-host.sh DIR makes a CUDA_HOME with it)"
done
for l in cudart cuda nvidia-ml; do
  [ -e "$cudalib/lib$l.so" ] || [ -e "$cudalib/stubs/lib$l.so" ] || die "ucc: no lib$l.so in $cudalib or $cudalib/stubs (bench/build/cuda-host.sh DIR makes a CUDA_HOME with it)"
done
cudart=$(readlink -f "$cudalib/libcudart.so")
NVCC=${NVCC:-}; [ -n "$NVCC" ] || { [ -x "$CUDA_HOME/bin/nvcc" ] && NVCC=$CUDA_HOME/bin/nvcc; } || NVCC=$(command -v nvcc) \
  || die "ucc: no nvcc (CUDA_HOME/bin/nvcc, NVCC or PATH): UCC's CUDA kernels need it"
nccl=$(nccl_home)
[ -f "$nccl/include/nccl.h" ] && [ -e "$nccl/lib/libnccl.so" ] || die "ucc: no include/nccl.h and lib/libnccl.so in $nccl"
ncclv=$(awk '/^#define NCCL_(MAJOR|MINOR|PATCH) /{printf "%s%s", s, $3; s="."}' "$nccl/include/nccl.h")
gencode=""; arch=$(cuda_arch)
for a in ${arch//,/ }; do gencode="$gencode -gencode=arch=compute_$a,code=sm_$a"; top=$a; done
gencode="${gencode# } -gencode=arch=compute_$top,code=compute_$top"

# --- build (in a copy: autogen.sh writes into the tree)
build=$(mktemp -d "${TMPDIR:-/tmp}/gpucomm-ucc-build.XXXX")
cp -a "$src/." "$build/"; cd "$build"
if [ ! -x configure ]; then
  for t in autoreconf automake libtoolize; do command -v $t > /dev/null || die "ucc: $t missing: a git source needs autoconf, automake and libtool (apt-get install autoconf automake libtool)"; done
  say "ucc: ./autogen.sh"
  ./autogen.sh > autogen.log 2>&1 || { tail -20 autogen.log; die "ucc: autogen.sh failed"; }
fi
# RUNPATH $ORIGIN-relative, given to the linker in a response file: no '$' passes through
# configure, make, libtool and the shell.  Entries for every kind of object (lib/, lib/ucc/,
# bin/), all of them inside PREFIX; libtool's absolute ones are dropped after install.
printf '%s\n' '--enable-new-dtags' '-rpath=$ORIGIN:$ORIGIN/..:$ORIGIN/../lib' > "$build/rpath.ld"
say "ucc $UCC_VERSION: configure in $build (UCX $ucx, CUDA $CUDA_HOME with $NVCC, NCCL $ncclv in $nccl, $gencode)"
./configure --prefix="$PREFIX" --with-ucx="$ucx" --with-cuda="$CUDA_HOME" --with-nccl="$nccl" \
  --with-nvcc-gencode="$gencode" --with-nvls=no --with-rocm=no --with-rccl=no --with-sharp=no --with-ibverbs=no \
  --with-rdmacm=no --with-doca_urom=no --with-mpi=no --disable-gtest \
  --disable-static --disable-dependency-tracking NVCC="$NVCC" LDFLAGS="-Wl,@$build/rpath.ld" \
  ${UCC_CONFIGURE_EXTRA:-} > configure.log 2>&1 || { tail -40 configure.log; die "ucc: configure failed"; }
sed -n '/UCC build configuration/,$p' configure.log
grep -q '^TL CUDA: enabled' configure.log || die "ucc: TL CUDA will not be built: $(grep -m1 '^TL CUDA' configure.log) (nvml.h / libnvidia-ml in CUDA_HOME?)"
tls=$(grep -m1 'TL modules:' configure.log); mcs=$(grep -m1 'MC modules:' configure.log)
for t in ucp cuda nccl; do echo "$tls" | grep -qw $t || die "ucc: configure will not build tl/$t ($tls)"; done
echo "$mcs" | grep -qw cuda || die "ucc: configure will not build mc/cuda ($mcs)"
grep -q '^NVLS support: no' configure.log || die "ucc: configure would build NVLS (NVLink multicast), which must stay off"
say "ucc: make -j$JOBS"
make -j"$JOBS" > make.log 2>&1 || { grep -E 'error' make.log | head -30; tail -20 make.log; die "ucc: make failed"; }
make install > install.log 2>&1 || { tail -20 install.log; die "ucc: make install failed"; }
strip_prefix "$PREFIX"

# --- stand alone in PREFIX: UCX (as ompi.sh copies it), the CUDA runtime (lib/ucc), RUNPATHs
cp -a "$ucx"/lib/lib*.so* "$PREFIX/lib/" && mkdir -p "$PREFIX/lib/ucx" && cp -a "$ucx"/lib/ucx/*.so* "$PREFIX/lib/ucx/" \
  || die "ucc: cannot copy UCX from $ucx"
cp -L "$cudart" "$PREFIX/lib/ucc/$(objdump -p "$cudart" | awk '/SONAME/{print $2}')" || die "ucc: cannot copy $cudart"
ucc_objs=("$PREFIX"/lib/libucc.so.*.*.* "$PREFIX"/lib/ucc/libucc_*.so "$PREFIX"/bin/ucc_*)
for f in "${ucc_objs[@]}"; do
  [ "$(head -c4 "$f" | tail -c3)" = ELF ] || continue
  rp=$(readelf -d "$f" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
  # keep the $ORIGIN entries only (libtool adds absolute ones): rewritten in place, shorter
  python3 - "$f" "$rp" <<'PY' || die "ucc: $f: RUNPATH '$rp' has no \$ORIGIN entry (the linker did not take $build/rpath.ld?) or cannot be cut"
import sys
path, rp = sys.argv[1], sys.argv[2].encode()
keep = []
for e in rp.split(b":"):
    if e.startswith(b"$ORIGIN") and e not in keep: keep.append(e)
if not keep: sys.exit(1)
new = b":".join(keep)
if new == rp: sys.exit(0)
data = open(path, "rb").read()
old = rp + b"\0"
if data.count(old) != 1: sys.exit(f"{path}: RUNPATH {rp} not found once")
open(path, "wb").write(data.replace(old, new.ljust(len(old), b"\0")))
PY
done
say "ucc: installed objects, NEEDED and RUNPATH:"
for f in "${ucc_objs[@]}"; do
  [ "$(head -c4 "$f" | tail -c3)" = ELF ] || continue
  echo "  ${f#$PREFIX/}: $(readelf -d "$f" | grep -E 'NEEDED|RUNPATH|RPATH' | grep -oE '\[.*\]' | tr -d '[]' | tr '\n' ' ')"
done
say "ucc: unresolved in PREFIX/lib (expected: the driver's libcuda.so.1, libnvidia-ml.so.1; libnccl.so.2 from LD_LIBRARY_PATH):"
for f in "${ucc_objs[@]}"; do
  miss=$(env -u LD_LIBRARY_PATH ldd "$f" 2>/dev/null | awk '/not found/{print $1}' | tr '\n' ' ')
  [ -z "$miss" ] || echo "  ${f#$PREFIX/}: $miss"
done
ls "$PREFIX/lib/ucc" | grep -q 'libucc_tl_cuda.so$' || die "ucc: no lib/ucc/libucc_tl_cuda.so installed"
for f in "${ucc_objs[@]}"; do
  ! readelf --dyn-syms --wide "$f" 2>/dev/null | grep -q 'cuMulticast' || die "ucc: ${f#$PREFIX/} calls cuMulticast* (NVLS): it must not"
done
say "ucc: no installed object refers to cuMulticast* (NVLS off)"
say "ucc $UCC_VERSION installed in $PREFIX: $(cd "$PREFIX/lib/ucc" && ls libucc_*.so | sed 's/libucc_//; s/\.so$//' | tr '\n' ' ')(NCCL $ncclv headers; build in $build)"
case $src in */gpucomm-src-ucc.*) rm -rf "$(dirname "$src")" ;; esac
# an NCCL unpacked here (not the caller's NCCL_HOME, which all.sh shares with the tools) goes
case ${NCCL_HOME:-}:$nccl in :*/gpucomm-nccl.*) rm -rf "$nccl" ;; esac
