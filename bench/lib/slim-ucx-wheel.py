#!/usr/bin/env python3
"""Repack the libucx-cu13 wheel without what an MPI launch never loads (static libraries, headers,
tools, the perftest module, the duplicate ``.so``/``.so.0.0.0`` copies of each library), so that
the wheels, the tree and the native tools fit in one device call (64 MiB): 43 MB -> about 8 MB.

    bench/lib/slim-ucx-wheel.py .whl/libucx_cu13-*.whl OUTDIR
"""
import os
import re
import sys
import zipfile


def keep(name):
    if name.endswith(".a") or "perftest" in name or "/bin/" in name or "/include/" in name:
        return False
    # libucx/lib/libucp.so.0 is the one the loader and gpucomm's LD_PRELOAD name
    return not re.search(r"\.so(\.0\.0\.0)?$", name) or "/lib/ucx/" in name and name.endswith(".so")


def main(src, outdir):
    os.makedirs(outdir, exist_ok=True)
    dst = os.path.join(outdir, os.path.basename(src))
    if os.path.abspath(dst) == os.path.abspath(src):
        sys.exit("slim-ucx-wheel: OUTDIR must differ from the wheel's folder")
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if not keep(info.filename):
                continue
            data = zin.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                data = "".join(line + "\n" for line in data.decode().splitlines()
                               if keep(line.split(",")[0])).encode()
            zout.writestr(info, data)
    print(f"{dst}: {os.path.getsize(src) / 1e6:.1f} MB -> {os.path.getsize(dst) / 1e6:.1f} MB")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    main(*sys.argv[1:])
