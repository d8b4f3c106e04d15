#!/usr/bin/env bash
# A CUDA_HOME for building Open MPI with CUDA on a machine without CUDA (the CPU machine, CI):
# the CUDA 13 headers of NVIDIA's nvidia-cuda-runtime and nvidia-cuda-crt wheels, and a
# link-time stub of the driver library generated from cuda.h (every cu* entry point, returning
# CUDA_ERROR_STUB_LIBRARY), as the toolkit's own lib64/stubs/libcuda.so.  Only libcuda.so is
# made, no libcuda.so.1: at run time the loader finds the node's driver, never the stub.
#
#   bench/build/cuda-host.sh DIR [WHEEL_DIR]     WHEEL_DIR: the two wheels; none: pip download
#
# Then:  CUDA_HOME=DIR bench/build/ompi.sh PREFIX [SOURCE]
. "$(dirname "$0")/lib.sh"
DIR=${1:?usage: cuda-host.sh DIR [WHEEL_DIR]}
whl=${2:-}
if [ -z "$whl" ]; then
  whl=$(mktemp -d "${TMPDIR:-/tmp}/gpucomm-cuda-wheels.XXXX")
  say "cuda-host: pip download nvidia-cuda-runtime==$CUDA_WHEEL_VERSION nvidia-cuda-crt==$CUDA_CRT_WHEEL_VERSION" >&2
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$whl" \
    "nvidia-cuda-runtime==$CUDA_WHEEL_VERSION" "nvidia-cuda-crt==$CUDA_CRT_WHEEL_VERSION" \
    || die "cuda-host: cannot download the CUDA wheels (no PyPI? pass a folder holding them)"
fi
rt=$(ls "$whl"/nvidia_cuda_runtime-*.whl 2>/dev/null | head -1); crt=$(ls "$whl"/nvidia_cuda_crt-*.whl 2>/dev/null | head -1)
[ -n "$rt" ] && [ -n "$crt" ] || die "cuda-host: $whl holds no nvidia_cuda_runtime-*.whl and nvidia_cuda_crt-*.whl"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpucomm-cuda-host.XXXX")
python3 -m zipfile -e "$rt" "$tmp" && python3 -m zipfile -e "$crt" "$tmp"
inc=$(dirname "$(find "$tmp" -path '*/include/cuda.h' | head -1)")
[ -f "$inc/cuda.h" ] || die "cuda-host: no include/cuda.h in $rt"
mkdir -p "$DIR/lib64/stubs"; rm -rf "$DIR/include"; cp -a "$inc" "$DIR/include"
# every driver entry point as cuda.h declares it after its macros (cuMemAlloc -> cuMemAlloc_v2)
echo '#include <cuda.h>' | ${CC:-cc} -E -P -I "$DIR/include" -x c - | tr '\n' ' ' \
  | grep -oE 'CUresult +(__attribute__ *\(\([^)]*\)\) *)?cu[A-Za-z0-9_]+ *\(' \
  | grep -oE 'cu[A-Za-z0-9_]+ *\($' | tr -d ' (' > "$tmp/symbols"
# and the names before those macros (cuMemFree as well as cuMemFree_v2: the driver exports both,
# and configure scripts link against the plain name)
grep -hoE 'CUresult +CUDAAPI +cu[A-Za-z0-9_]+ *\(' "$DIR/include/cuda.h" | grep -oE 'cu[A-Za-z0-9_]+' >> "$tmp/symbols"
sort -u -o "$tmp/symbols" "$tmp/symbols"
n=$(wc -l < "$tmp/symbols"); [ "$n" -gt 300 ] || die "cuda-host: only $n driver functions found in cuda.h"
awk '{ printf "int %s(void) { return 34; }\n", $1 }' "$tmp/symbols" > "$tmp/stub.c"   # 34: CUDA_ERROR_STUB_LIBRARY
${CC:-cc} -shared -fPIC -o "$DIR/lib64/stubs/libcuda.so" -Wl,-soname,libcuda.so.1 "$tmp/stub.c"
rm -rf "$tmp"; case $whl in */gpucomm-cuda-wheels.*) rm -rf "$whl" ;; esac
say "cuda-host: $DIR: CUDA headers $(grep -m1 -oE 'define CUDA_VERSION [0-9]+' "$DIR/include/cuda.h" | cut -d' ' -f3), libcuda stub with $n functions"
