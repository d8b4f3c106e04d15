#!/usr/bin/env bash
# A UCX install prefix (include/, lib/libuc{s,m,t,p}.so, lib/ucx/ modules with cuda_copy and
# cuda_ipc) from NVIDIA's libucx-cu13 wheel, for OMPI_WITH_UCX of bench/build/ompi.sh.
#
#   bench/build/ucx-prefix.sh DIR [WHEEL]        WHEEL: libucx_cu13-*.whl; none: pip download
. "$(dirname "$0")/lib.sh"
DIR=${1:?usage: ucx-prefix.sh DIR [WHEEL]}
wheel=${2:-}
if [ -z "$wheel" ]; then
  d=$(mktemp -d "${TMPDIR:-/tmp}/gpucomm-ucx-wheel.XXXX")
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_28_x86_64 -d "$d" "libucx-cu13==$UCX_WHEEL_VERSION" \
    || die "ucx-prefix: cannot download libucx-cu13==$UCX_WHEEL_VERSION (no PyPI? pass the wheel)"
  wheel=$(ls "$d"/libucx_cu13-*.whl)
fi
[ -f "$wheel" ] || die "ucx-prefix: $wheel: no such wheel"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpucomm-ucx.XXXX"); python3 -m zipfile -e "$wheel" "$tmp"
[ -f "$tmp/libucx/include/ucp/api/ucp.h" ] || die "ucx-prefix: $wheel has no libucx/include (a slimmed wheel? use the one from PyPI)"
rm -rf "$DIR"; mkdir -p "$DIR/lib/ucx"
cp -a "$tmp/libucx/include" "$DIR/"
for l in ucs ucm uct ucp; do cp -L "$tmp/libucx/lib/lib$l.so.0" "$DIR/lib/"; ln -sf "lib$l.so.0" "$DIR/lib/lib$l.so"; done
for f in "$tmp"/libucx/lib/ucx/*.so.0; do case $f in *perftest*) ;; *) cp -L "$f" "$DIR/lib/ucx/"; ln -sf "$(basename "$f")" "$DIR/lib/ucx/$(basename "$f" .0)" ;; esac; done
# The wheel's CUDA memory hooks (ucx/libucm_cuda.so.0) need the CUDA runtime auditwheel vendored
# beside the package (RPATH $ORIGIN/../../../libucx_cu13.libs): without it the module does not
# load, UCX takes device pointers for host memory and the first device-buffer send crashes
# (21-every-method, call 2: pml ucx, rc 139).  The runtime goes into lib/, the RPATH (same
# length, NUL-padded) becomes $ORIGIN/.. : found wherever the prefix is unpacked.
cp -L "$tmp"/libucx_cu13.libs/libcudart-*.so* "$DIR/lib/" || die "ucx-prefix: no vendored CUDA runtime in $wheel"
python3 - "$DIR/lib/ucx/libucm_cuda.so.0" <<'PY' || die "ucx-prefix: cannot point libucm_cuda.so.0 at lib/"
import sys
path = sys.argv[1]
old = b"$ORIGIN/../../../libucx_cu13.libs\0"
new = b"$ORIGIN/..\0"
data = open(path, "rb").read()
if data.count(old) != 1:
    sys.exit(f"{path}: RPATH {old[:-1].decode()} not found once")
open(path, "wb").write(data.replace(old, new.ljust(len(old), b"\0")))
PY
rm -rf "$tmp"; case $wheel in */gpucomm-ucx-wheel.*) rm -rf "$(dirname "$wheel")" ;; esac
say "ucx-prefix: $DIR from $(basename "$wheel"): $(ls "$DIR/lib/ucx" | tr '\n' ' ')"
