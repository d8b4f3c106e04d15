"""The nvshmem method's build and layout, without a GPU: where NVSHMEM and nvcc are looked for,
the reasons when they are missing or the build fails (the compiler's first error line), the
per-user cache, and the transfer shapes and heap size the kernels are launched with."""

import os
import stat

import pytest

from gpucomm.errors import CapabilityError, GpucommError
from gpucomm.payload.methods import nvshmem as m
from gpucomm.payload.nvshmem import build


def fake_home(root):
    for rel in ("include/nvshmem.h", "lib/libnvshmem_host.so.3", "lib/libnvshmem_device.a"):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    return root


def fake_nvcc(root, body):
    path = root / "nvcc"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_nvshmem_is_found_from_the_environment_or_named_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "_wheel_homes", lambda: [])
    with pytest.raises(CapabilityError, match=r"NVSHMEM library not found: no nvidia-nvshmem-cu13 \(or -cu12\) wheel"):
        build.nvshmem_home({})
    with pytest.raises(CapabilityError, match=r"NVSHMEM_HOME=.* lacks include/nvshmem.h, lib/libnvshmem_host"):
        build.nvshmem_home({"NVSHMEM_HOME": str(tmp_path)})
    home = fake_home(tmp_path / "nv")
    assert build.nvshmem_home({"GPUCOMM_NVSHMEM_HOME": str(home)}) == str(home)
    monkeypatch.setattr(build, "_wheel_homes", lambda: [str(tmp_path / "none"), str(home)])
    assert build.nvshmem_home({}) == str(home)  # the wheel's layout: nvidia/nvshmem/{include,lib}
    assert build.host_library(str(home)).endswith("libnvshmem_host.so.3")


def test_nvcc_is_found_or_named_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "DEFAULT_CUDA_HOMES", ())
    with pytest.raises(CapabilityError, match="nvcc not found"):
        build.nvcc_path({"PATH": str(tmp_path), "CUDA_HOME": str(tmp_path)})
    nvcc = fake_nvcc(tmp_path, "exit 0\n")
    assert build.nvcc_path({"PATH": str(tmp_path)}) == str(nvcc)
    assert build.nvcc_path({"GPUCOMM_NVCC": str(nvcc)}) == str(nvcc)
    with pytest.raises(CapabilityError, match="GPUCOMM_NVCC=/nope is not an executable"):
        build.nvcc_path({"GPUCOMM_NVCC": "/nope"})


def test_a_failed_build_names_the_compilers_first_error_and_leaves_nothing(tmp_path):
    home = fake_home(tmp_path / "nv")
    nvcc = fake_nvcc(tmp_path, 'echo "In file included from x.h:1," >&2\n'
                               'echo "kernels.cu(42): error: identifier \\"nvshmemx_foo\\" is undefined" >&2\n'
                               'echo "kernels.cu(43): error: second" >&2\nexit 2\n')
    env = {"GPUCOMM_NVSHMEM_HOME": str(home), "GPUCOMM_NVCC": str(nvcc), "GPUCOMM_CACHE": str(tmp_path / "c")}
    with pytest.raises(CapabilityError) as exc:
        build.library("sm_90", env)
    assert str(exc.value) == ('building the NVSHMEM kernels failed: kernels.cu(42): error: identifier '
                              '"nvshmemx_foo" is undefined')
    assert [p.name for p in (tmp_path / "c").iterdir() if not p.name.endswith(".lock")] == []


def test_a_build_is_cached_per_source_nvcc_nvshmem_and_architecture(tmp_path):
    home = fake_home(tmp_path / "nv")
    log = tmp_path / "calls"
    # a "compiler" that writes the -o file and records its arguments
    nvcc = fake_nvcc(tmp_path, f'echo "$@" >> {log}\nwhile [ "$1" != "-o" ]; do shift; done; echo lib > "$2"\n')
    env = {"GPUCOMM_NVSHMEM_HOME": str(home), "GPUCOMM_NVCC": str(nvcc), "GPUCOMM_CACHE": str(tmp_path / "c")}
    first = build.library("sm_90", env)
    assert build.library("sm_90", env) == first and os.path.exists(first)
    other = build.library("sm_80", env)
    assert other != first
    calls = log.read_text().splitlines()
    assert len(calls) == 2  # the second sm_90 call found the cached library
    args = calls[0].split()
    assert "-rdc=true" in args and "-arch=sm_90" in args and "-lnvshmem_device" in args
    assert "-l:libnvshmem_host.so.3" in args and f"-rpath={home}/lib" in args
    assert build.probe(env) == {"home": str(home), "nvcc": str(nvcc)}
    assert "error" in build.probe({"GPUCOMM_NVSHMEM_HOME": str(tmp_path / "none")})


def test_cache_dir_order(tmp_path):
    assert build.cache_dir({"GPUCOMM_CACHE": "/x"}) == "/x"
    assert build.cache_dir({"XDG_CACHE_HOME": "/y"}) == "/y/gpucomm"


@pytest.mark.parametrize("nbytes,blocks,chunk,threads", [
    (1, 1, 16, 32), (8, 1, 16, 32), (4096, 1, 4096, 32), (4097, 1, 4112, 1024),
    (1 << 20, 16, 65536, 1024), (1 << 30, 32, (1 << 30) // 32, 1024), (100_000, 2, 50000, 1024),
])
def test_launch_shape_covers_the_message_in_aligned_chunks(nbytes, blocks, chunk, threads):
    shape = m.launch_shape(nbytes, 32)
    assert shape == (blocks, chunk, threads)
    assert shape[0] * shape[1] >= nbytes and shape[1] % m.ALIGN == 0


def test_alltoall_shape_stays_within_the_block_limit():
    (grid, chunk, threads), per_peer = m.alltoall_shape(1 << 30, 4, 32)
    assert (grid, per_peer, threads) == (32, 8, 1024) and chunk * per_peer >= 1 << 30
    (grid, _, _), per_peer = m.alltoall_shape(1 << 20, 256, 32)  # more peers than blocks
    assert (grid, per_peer) == (32, 1)
    assert m.alltoall_shape(8, 2, 32) == ((2, 16, 32), 1)


def test_requests_and_heap():
    assert m.path_request({}) == "auto" and m.path_request({"GPUCOMM_NVSHMEM_PATH": "Kernel"}) == "kernel"
    with pytest.raises(GpucommError, match="bad GPUCOMM_NVSHMEM_PATH"):
        m.path_request({"GPUCOMM_NVSHMEM_PATH": "x"})
    assert m.blocks_request({}) == m.DEFAULT_BLOCKS and m.blocks_request({"GPUCOMM_NVSHMEM_BLOCKS": "64"}) == 64
    assert m.heap_bytes(1 << 30, 1 << 30, 2) == (2 << 30) + 48 + m.HEAP_MARGIN


@pytest.mark.skipif("error" in build.probe(),
                    reason=f"needs nvcc and NVSHMEM to build the kernels: {build.probe().get('error')}")
@pytest.mark.nvcc
def test_the_kernels_build_with_nvcc(tmp_path):
    """The real kernels.cu, built with the nvcc found and NVSHMEM (GPUCOMM_NVSHMEM_HOME, else the
    nvidia-nvshmem-cu13 wheel of the test extra) for Hopper: the library the nvshmem method loads."""
    path = build.library("sm_90", dict(os.environ, GPUCOMM_CACHE=str(tmp_path)))
    assert os.path.getsize(path) > 0
