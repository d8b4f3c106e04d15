#!/usr/bin/env bash
# A CUDA_HOME for building Open MPI and UCC with CUDA on a machine without CUDA (the CPU machine,
# CI): the CUDA 13 headers of NVIDIA's nvidia-cuda-runtime, nvidia-cuda-crt and nvidia-cuda-cccl
# wheels (the toolkit's layout: include/nv/, include/cccl/), the CUDA runtime of the first
# (lib64/libcudart.so.13), nvml.h of the nvidia-nvml-dev wheel, and link-time stubs of the driver
# libraries generated from the headers, as the toolkit's own lib64/stubs: libcuda.so from cuda.h
# (every cu* entry point, returning CUDA_ERROR_STUB_LIBRARY) and libnvidia-ml.so from nvml.h
# (every nvml* entry point, returning NVML_ERROR_UNKNOWN; UCC's configure disables its TL CUDA
# without NVML).  Only libcuda.so and libnvidia-ml.so are made, no .so.1: at run time the loader
# finds the node's driver, never a stub.  No nvcc: UCC takes the one on PATH (or NVCC).
#
#   bench/build/cuda-host.sh DIR [WHEEL_DIR]     WHEEL_DIR: the wheels; those it lacks (or all,
#                                                without it) are pip-downloaded
#
# Then:  CUDA_HOME=DIR bench/build/ompi.sh PREFIX [SOURCE]
. "$(dirname "$0")/lib.sh"
DIR=${1:?usage: cuda-host.sh DIR [WHEEL_DIR]}
whl=${2:-}
[ -z "$whl" ] || [ -d "$whl" ] || die "cuda-host: $whl: no such folder"
dl=$(mktemp -d "${TMPDIR:-/tmp}/gpucomm-cuda-wheels.XXXX")
# wheel PROJECT VERSION: the wheel file, from WHEEL_DIR or pip-downloaded into $dl
wheel() {
  local f; f=$(ls "${whl:-/nonexistent}"/"${1//-/_}"-"$2"-*.whl 2>/dev/null | head -1)
  if [ -z "$f" ]; then
    say "cuda-host: pip download $1==$2" >&2
    python3 -m pip download -q --no-deps --only-binary=:all: -d "$dl" "$1==$2" >&2 \
      || die "cuda-host: cannot download $1==$2 (no PyPI? pass a folder holding the wheels)"
    f=$(ls "$dl"/"${1//-/_}"-"$2"-*.whl 2>/dev/null | head -1)
  fi
  [ -n "$f" ] || die "cuda-host: no ${1//-/_}-$2-*.whl"
  echo "$f"
}
rt=$(wheel nvidia-cuda-runtime "$CUDA_WHEEL_VERSION"); crt=$(wheel nvidia-cuda-crt "$CUDA_CRT_WHEEL_VERSION")
cccl=$(wheel nvidia-cuda-cccl "$CUDA_CCCL_WHEEL_VERSION"); nvml=$(wheel nvidia-nvml-dev "$NVML_WHEEL_VERSION")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpucomm-cuda-host.XXXX")
for w in "$rt" "$crt" "$cccl" "$nvml"; do python3 -m zipfile -e "$w" "$tmp"; done
inc=$(dirname "$(find "$tmp" -path '*/include/cuda.h' | head -1)")
[ -f "$inc/cuda.h" ] || die "cuda-host: no include/cuda.h in $rt"
[ -f "$inc/nvml.h" ] || die "cuda-host: no include/nvml.h in $nvml"
[ -f "$inc/nv/target" ] || die "cuda-host: no include/nv/target in $cccl"
mkdir -p "$DIR/lib64/stubs"; rm -rf "$DIR/include"; cp -a "$inc" "$DIR/include"
# the CUDA runtime UCC links (libcudart.so.13; ucc.sh copies it into PREFIX/lib/ucc)
cp -L "$(dirname "$inc")"/lib/libcudart.so.[0-9]* "$DIR/lib64/" || die "cuda-host: no lib/libcudart.so.* in $rt"
cudart=$(cd "$DIR/lib64" && ls libcudart.so.[0-9]* | head -1); ln -sfn "$cudart" "$DIR/lib64/libcudart.so"
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
# NVML the same way: the names nvml.h declares (nvmlInit as well as nvmlInit_v2, and
# nvmlErrorString), and those its macros make
grep -oE 'DECLDIR +(char *\* *)?nvml[A-Za-z0-9_]+ *\(' "$DIR/include/nvml.h" | grep -oE 'nvml[A-Za-z0-9_]+' > "$tmp/nvml-symbols"
echo '#include <nvml.h>' | ${CC:-cc} -E -P -I "$DIR/include" -x c - | tr '\n' ' ' \
  | grep -oE 'nvml[A-Za-z0-9_]+ *\(' | tr -d ' (' >> "$tmp/nvml-symbols"
sort -u -o "$tmp/nvml-symbols" "$tmp/nvml-symbols"
m=$(wc -l < "$tmp/nvml-symbols"); [ "$m" -gt 200 ] || die "cuda-host: only $m NVML functions found in nvml.h"
awk '{ printf "int %s(void) { return 999; }\n", $1 }' "$tmp/nvml-symbols" > "$tmp/nvml-stub.c"   # 999: NVML_ERROR_UNKNOWN
${CC:-cc} -shared -fPIC -o "$DIR/lib64/stubs/libnvidia-ml.so" -Wl,-soname,libnvidia-ml.so.1 "$tmp/nvml-stub.c"
rm -rf "$tmp" "$dl"
say "cuda-host: $DIR: CUDA headers $(grep -m1 -oE 'define CUDA_VERSION [0-9]+' "$DIR/include/cuda.h" | cut -d' ' -f3), $cudart, libcuda stub with $n functions, nvml.h and libnvidia-ml stub with $m functions"
