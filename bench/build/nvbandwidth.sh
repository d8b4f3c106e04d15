#!/usr/bin/env bash
# nvbandwidth (NVIDIA's host <-> device and device-local copy benchmark) at a pinned commit: the
# native side of the GPU data-path check (checks/datapaths.py; bench/lib/datapaths_side_by_side.py).
#
#   bench/build/nvbandwidth.sh DEST [SOURCE]   SOURCE: an nvbandwidth source folder (its
#                                              version.h must say NVBANDWIDTH_VERSION); none:
#                                              git clone (versions.sh: the commit is checked)
# Environment: CUDA_HOME [/usr/local/cuda], CUDA_ARCH [GPU 0's, else 90], JOBS [nproc],
# BOOST_ROOT (a Boost with program_options), else the system's (/usr/include/boost with the
# program_options library's CMake package), else
# BOOST_DEBS=DIR: the Debian packages of versions.sh's NVBANDWIDTH_BOOST_DEBS, unpacked into a
# temporary prefix (dpkg -x, never over /).  nvidia-ml and cuda link against CUDA's stubs where
# the node has no unversioned libraries (the driver's are loaded at run time).
# DEST gets the nvbandwidth binary (Boost linked statically, as upstream's CMakeLists asks).
. "$(dirname "$0")/lib.sh"
DEST=${1:?usage: nvbandwidth.sh DEST [SOURCE]}
if [ -z "${2:-}" ]; then
  mkdir -p "$SRC_CACHE"; clone=$SRC_CACHE/nvbandwidth-$NVBANDWIDTH_VERSION
  [ -d "$clone/.git" ] || git clone -q "$NVBANDWIDTH_GIT" "$clone" || die "nvbandwidth: cannot clone $NVBANDWIDTH_GIT"
  git -C "$clone" checkout -q "$NVBANDWIDTH_COMMIT" || die "nvbandwidth: no commit $NVBANDWIDTH_COMMIT"
  [ "$(git -C "$clone" rev-parse HEAD)" = "$NVBANDWIDTH_COMMIT" ] || die "nvbandwidth: not at $NVBANDWIDTH_COMMIT"
  src=$clone; say "nvbandwidth: $NVBANDWIDTH_GIT at $NVBANDWIDTH_COMMIT (checked)"
else
  [ -d "$2" ] || die "nvbandwidth: $2: no such file or folder"
  src=$(cd "$2" && pwd); say "nvbandwidth: source folder $src (taken as it is)"
fi
grep -q "define NVBANDWIDTH_VERSION \"$NVBANDWIDTH_VERSION\"" "$src/version.h" \
  || die "nvbandwidth: $src is not $NVBANDWIDTH_VERSION (version.h)"
command -v cmake >/dev/null || die "nvbandwidth: no cmake"
[ -x "$CUDA_HOME/bin/nvcc" ] || die "nvbandwidth: no nvcc in $CUDA_HOME/bin (set CUDA_HOME)"
build=$(mktemp -d "${TMPDIR:-/tmp}/gpucomm-nvbandwidth-build.XXXX")
prefix_opts=()
if [ -n "${BOOST_ROOT:-}" ]; then
  prefix_opts=(-DCMAKE_PREFIX_PATH="$BOOST_ROOT"); say "nvbandwidth: Boost from BOOST_ROOT=$BOOST_ROOT"
elif [ -f /usr/include/boost/program_options.hpp ] && ls /usr/lib/*/cmake/boost_program_options-*/ >/dev/null 2>&1; then
  say "nvbandwidth: the system's Boost (/usr/include/boost, its program_options library)"
elif [ -n "${BOOST_DEBS:-}" ]; then
  boost=$build/boost
  for p in $NVBANDWIDTH_BOOST_DEBS; do
    deb=$(ls "$BOOST_DEBS"/"${p}"_*.deb 2>/dev/null | head -1)
    [ -n "$deb" ] || die "nvbandwidth: no ${p}_*.deb in $BOOST_DEBS (apt-get download $NVBANDWIDTH_BOOST_DEBS)"
    dpkg -x "$deb" "$boost"
  done
  config=$(ls -d "$boost"/usr/lib/*/cmake/Boost-*/ | head -1)
  # this Boost's CMake package, not the system's (a node may have Boost's headers and config
  # without program_options, as the lent H200 machine's Boost 1.83)
  prefix_opts=(-DCMAKE_PREFIX_PATH="$boost/usr" -DBoost_DIR="$config" -DBoost_NO_SYSTEM_PATHS=ON)
  say "nvbandwidth: Boost from the Debian packages of $BOOST_DEBS, unpacked in $boost"
else
  die "nvbandwidth: no Boost program_options: install libboost-program-options-dev, or set BOOST_ROOT, or BOOST_DEBS=DIR"
fi
stubs=$CUDA_HOME/lib64/stubs
[ -d "$stubs" ] || stubs=$CUDA_HOME/targets/x86_64-linux/lib/stubs
arch=$(cuda_arch)
say "nvbandwidth $NVBANDWIDTH_VERSION: cmake in $build (sm_$arch)"
mkdir -p "$build/src"; cp -r "$src/." "$build/src/"
LIBRARY_PATH="${LIBRARY_PATH:+$LIBRARY_PATH:}$stubs" cmake -S "$build/src" -B "$build/b" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DCMAKE_CUDA_COMPILER="$CUDA_HOME/bin/nvcc" "${prefix_opts[@]}" > "$build/cmake.log" 2>&1 \
  || { tail -30 "$build/cmake.log"; die "nvbandwidth: cmake failed"; }
LIBRARY_PATH="${LIBRARY_PATH:+$LIBRARY_PATH:}$stubs" cmake --build "$build/b" -j"$JOBS" > "$build/make.log" 2>&1 \
  || { grep -E 'error' "$build/make.log" | head -30; die "nvbandwidth: build failed"; }
mkdir -p "$DEST"; cp "$build/b/nvbandwidth" "$DEST/"
say "nvbandwidth $NVBANDWIDTH_VERSION in $DEST/nvbandwidth"
rm -rf "$build"
