# Helpers of bench/build/*.sh (sourced).
set -euo pipefail
BUILD_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$BUILD_DIR/versions.sh"
JOBS=${JOBS:-$(nproc)}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
# where fetched sources are kept (ignored by git: /ext/ in .gitignore)
SRC_CACHE=${GPUCOMM_SRC_CACHE:-$(cd "$BUILD_DIR/../.." && pwd)/ext/src}

say() { echo "[$(date -u +%T)] $*"; }
die() { echo "build: $*" >&2; exit 2; }

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# unpacked_source NAME ARG URL SHA256 [OTHER_SHA256...]: the folder of an unpacked source tree,
# echoed.  ARG: a folder (taken as it is), a tarball (its sha256 must be one of the given, or
# SOURCE_SHA256 when set), or empty: the tarball is downloaded from URL into SRC_CACHE (or
# taken from there) and checked.
unpacked_source() {
  local name=$1 arg=$2 url=$3; shift 3
  local sums=("$@") tarball got
  [ -n "${SOURCE_SHA256:-}" ] && sums=("$SOURCE_SHA256")
  if [ -n "$arg" ] && [ -d "$arg" ]; then
    say "$name: source folder $arg (taken as it is, no checksum)" >&2
    (cd "$arg" && pwd); return
  fi
  if [ -n "$arg" ]; then
    [ -f "$arg" ] || die "$name: $arg: no such file or folder"
    tarball=$arg
  else
    mkdir -p "$SRC_CACHE"; tarball=$SRC_CACHE/$(basename "$url")
    if [ ! -f "$tarball" ]; then
      say "$name: downloading $url" >&2
      curl -fsSL --retry 3 -o "$tarball.part" "$url" || die "$name: cannot download $url (no network? pass a source tarball or folder)"
      mv "$tarball.part" "$tarball"
    fi
  fi
  got=$(sha256_of "$tarball")
  local s ok=0; for s in "${sums[@]}"; do [ "$got" = "$s" ] && ok=1; done
  [ $ok = 1 ] || die "$name: $tarball has sha256 $got, expected ${sums[*]} (SOURCE_SHA256=... to build another tarball knowingly)"
  say "$name: $tarball sha256 $got (checked)" >&2
  local dest; dest=$(mktemp -d "${TMPDIR:-/tmp}/gpucomm-src-$name.XXXX")
  tar xf "$tarball" -C "$dest"
  local top; top=$(find "$dest" -mindepth 1 -maxdepth 1 -type d | head -1)
  [ -n "$top" ] || die "$name: $tarball holds no folder"
  echo "$top"
}

# nccl_home: a folder with include/nccl.h and lib/libnccl.so, echoed: NCCL_HOME if set; else
# the nvidia-nccl-cu13/-cu12 wheel of python3 (its lib has only libnccl.so.2: a link is added);
# else NCCL_WHEEL (an nvidia_nccl_cu13 wheel file) or nvidia-nccl-cu13==NCCL_WHEEL_VERSION
# pip-downloaded (versions.sh: the reference node's), unpacked into a temporary folder
nccl_home() {
  if [ -n "${NCCL_HOME:-}" ]; then echo "$NCCL_HOME"; return; fi
  local wheel home
  if [ -z "${NCCL_WHEEL:-}" ] && wheel=$(python3 -c "import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])" 2>/dev/null); then
    home=${TMPDIR:-/tmp}/gpucomm-nccl-home
    mkdir -p "$home/lib"; ln -sfn "$wheel/include" "$home/include"
    for f in "$wheel"/lib/libnccl.so*; do ln -sf "$f" "$home/lib/"; done
    [ -e "$home/lib/libnccl.so" ] || ln -sf "$wheel/lib/libnccl.so.2" "$home/lib/libnccl.so"
    echo "$home"; return
  fi
  wheel=${NCCL_WHEEL:-}
  if [ -z "$wheel" ]; then
    local wd; wd=$(mktemp -d "${TMPDIR:-/tmp}/gpucomm-nccl-wheel.XXXX")
    say "pip download nvidia-nccl-cu13==$NCCL_WHEEL_VERSION" >&2
    python3 -m pip download -q --no-deps --only-binary=:all: -d "$wd" "nvidia-nccl-cu13==$NCCL_WHEEL_VERSION" >&2 \
      || die "no NCCL: cannot download nvidia-nccl-cu13==$NCCL_WHEEL_VERSION (no PyPI? NCCL_WHEEL=the wheel, or NCCL_HOME)"
    wheel=$(ls "$wd"/nvidia_nccl_cu13-*.whl)
  fi
  [ -f "$wheel" ] || die "no NCCL: $wheel: no such wheel"
  home=$(mktemp -d "${TMPDIR:-/tmp}/gpucomm-nccl.XXXX")
  python3 - "$wheel" "$home" <<'PY' || die "no NCCL: no nvidia/nccl/include/nccl.h and lib/libnccl.so.2 in $wheel"
import os, shutil, sys, zipfile
z = zipfile.ZipFile(sys.argv[1]); dest = sys.argv[2]
names = [n for n in z.namelist() if n.startswith("nvidia/nccl/include/") or n == "nvidia/nccl/lib/libnccl.so.2"]
if "nvidia/nccl/lib/libnccl.so.2" not in names or "nvidia/nccl/include/nccl.h" not in names:
    sys.exit(1)
for n in names:
    if n.endswith("/"):
        continue
    out = os.path.join(dest, n[len("nvidia/nccl/"):]); os.makedirs(os.path.dirname(out), exist_ok=True)
    with z.open(n) as i, open(out, "wb") as o:
        shutil.copyfileobj(i, o)
PY
  ln -sf libnccl.so.2 "$home/lib/libnccl.so"
  echo "$home"
}

# cuda_arch: compute capability of GPU 0 as 90, or CUDA_ARCH, or 90 (H100/H200)
cuda_arch() {
  if [ -n "${CUDA_ARCH:-}" ]; then echo "$CUDA_ARCH"; return; fi
  local cc; cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
  echo "${cc:-90}"
}

# strip_prefix DIR: strip binaries and libraries, drop static libraries, libtool files, docs
strip_prefix() {
  local d=$1
  find "$d" -name '*.a' -delete -o -name '*.la' -delete
  rm -rf "$d/share/doc" "$d/share/man" "$d/share/openmpi/doc" 2>/dev/null || true
  find "$d" -type f \( -perm -u+x -o -name '*.so*' \) -exec sh -c \
    'for f; do [ "$(head -c4 "$f" | tail -c3)" = ELF ] && strip --strip-unneeded "$f" 2>/dev/null; done; true' _ {} +
}
