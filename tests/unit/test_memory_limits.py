"""The payload's memory check reads a cgroup's limit (a Slurm job's) besides the node's free
memory, and counts what validation adds."""

from gpucomm.payload.backend import NumpyBackend, cgroup_room


def _tree(tmp_path, proc, files):
    (tmp_path / "cgroup").write_text(proc)
    for rel, text in files.items():
        path = tmp_path / "fs" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(tmp_path / "cgroup"), str(tmp_path / "fs")


def test_cgroup_v2_limit(tmp_path):
    proc, root = _tree(tmp_path, "0::/job_7/step_0\n",
                       {"job_7/step_0/memory.max": "4294967296\n", "job_7/step_0/memory.current": "1073741824\n"})
    assert cgroup_room(proc, root) == 3 << 30


def test_cgroup_v1_limit_and_no_limit(tmp_path):
    proc, root = _tree(tmp_path, "4:memory:/slurm/uid_0/job_7\n0::/\n",
                       {"memory/slurm/uid_0/job_7/memory.limit_in_bytes": str(2 << 30),
                        "memory/slurm/uid_0/job_7/memory.usage_in_bytes": str(1 << 30), "memory.max": "max"})
    assert cgroup_room(proc, root) == 1 << 30
    (tmp_path / "none").mkdir()
    proc, root = _tree(tmp_path / "none", "0::/\n",
                       {"memory.max": "max\n", "memory.current": "5\n"})
    assert cgroup_room(proc, root) is None


def test_host_check_counts_the_cgroup(monkeypatch):
    """A cgroup limit below the node's free memory is what a rank gets."""
    import gpucomm.payload.backend as backend
    monkeypatch.setattr(backend, "cgroup_room", lambda: 1 << 30)
    assert NumpyBackend().free_bytes(2) == 1 << 29


def test_too_large_for_the_limit_is_one_line(monkeypatch):
    """--sizes 4G past the limit: bad input before any allocation, its line naming the need."""
    import pytest

    import gpucomm.payload.backend as backend
    from gpucomm.errors import GpucommError
    from gpucomm.payload.engine import _check_memory
    monkeypatch.setattr(backend, "cgroup_room", lambda: 16 << 30)
    with pytest.raises(GpucommError, match="needs 20.00 GiB per rank"):
        _check_memory(NumpyBackend(), 8 << 30, 1, 4 << 30)  # 2 x 4 GiB buffers, x 2.5
