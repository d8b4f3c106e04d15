"""The GPU data-path operation's parts that need no GPU: NUMA facts from sysfs, the slowed-GPU
hook's syntax, the figures, the check's case count and the side-by-side with nvbandwidth."""

import json
import subprocess
import sys

import pytest

from gpucomm.constants import DATAPATHS, TEST_SLOW_GPU
from gpucomm.errors import GpucommError
from gpucomm.metrics import datapath_GBps
from gpucomm.payload import numa
from gpucomm.payload.faults import check_requests, slow_gpu_request
from gpucomm.rfm.datapaths import expected_cases, gpu_name, var_base

REPO_SCRIPT = "bench/lib/datapaths_side_by_side.py"


def _node_tree(root, rows, cpus):
    (root / "has_cpu").write_text(",".join(map(str, sorted(cpus))) + "\n")
    (root / "possible").write_text(f"0-{len(rows) - 1}\n")
    for n, row in enumerate(rows):
        (root / f"node{n}").mkdir()
        (root / f"node{n}" / "distance").write_text(" ".join(map(str, row)) + "\n")
        (root / f"node{n}" / "cpulist").write_text(f"{8 * n}-{8 * n + 7}\n" if n in cpus else "\n")


def test_farthest_node_with_cpus(tmp_path):
    # 4 CPU nodes and 2 memory-only nodes (a GH200's HBM): the far node is a CPU node
    rows = [[10, 12, 20, 20, 80, 80], [12, 10, 20, 20, 80, 80], [20, 20, 10, 12, 80, 80],
            [20, 20, 12, 10, 80, 80], [80] * 6, [80] * 6]
    _node_tree(tmp_path, rows, {0, 1, 2, 3})
    assert numa.cpu_nodes(tmp_path) == [0, 1, 2, 3]
    assert numa.farthest(0, tmp_path) == 2 and numa.farthest(3, tmp_path) == 0
    assert numa.node_cpus(1, tmp_path) == list(range(8, 16))
    assert numa.parse_list("0-2,5,7-8") == [0, 1, 2, 5, 7, 8]


def test_gpu_node_from_its_pci_device(tmp_path):
    nodes, pci = tmp_path / "node", tmp_path / "pci"
    nodes.mkdir()
    _node_tree(nodes, [[10, 20], [20, 10]], {0, 1})
    for bus, value in (("0000:19:00.0", "1"), ("0000:00:06.0", "-1")):
        (pci / bus).mkdir(parents=True)
        (pci / bus / "numa_node").write_text(value + "\n")
    assert numa.gpu_node("0000:19:00.0", pci, nodes) == 1
    assert numa.gpu_node("0000:00:06.0", pci, nodes) == 0  # none given: the first CPU node
    assert numa.farthest(1, nodes) == 0


def test_host_buffer_is_placed_and_says_how():
    buf = numa.HostBuffer(1 << 16, numa.cpu_nodes()[0] if numa.cpu_nodes() else None)
    assert buf.binding in (numa.BINDING_MBIND, numa.BINDING_FIRST_TOUCH, numa.BINDING_NONE)
    assert buf.array.nbytes == 1 << 16 and not buf.array.any()
    buf.close()


@pytest.mark.parametrize("spec", ["1", "a:0.5", "0:1.5", "0:0", "-1:0.5"])
def test_slow_gpu_hook_syntax(monkeypatch, spec):
    monkeypatch.setenv(TEST_SLOW_GPU, spec)
    with pytest.raises(GpucommError, match="expected IDX:FACTOR"):
        slow_gpu_request()


def test_slow_gpu_hook_names_a_gpu_that_exists(monkeypatch):
    monkeypatch.setenv(TEST_SLOW_GPU, "3:0.5")
    assert slow_gpu_request() == (3, 0.5)
    with pytest.raises(GpucommError, match="there is no GPU 3"):
        check_requests(1, [1 << 20], ["staging"], "gpu-datapaths")
    with pytest.raises(GpucommError, match="fires only in gpu-datapaths"):
        check_requests(4, [1 << 20], ["ccl"], "pingpong")


def test_figures():
    assert datapath_GBps("h2d", 10**9, 1.0) == {"goodput_GBps": 1.0, "busbw_GBps": 1.0}
    assert datapath_GBps("bidir", 10**9, 1.0) == {"goodput_GBps": 2.0, "busbw_GBps": 1.0, "direction_GBps": 1.0}
    assert datapath_GBps("local", 10**9, 0.5) == {"goodput_GBps": 2.0, "busbw_GBps": 0.0, "hbm_GBps": 4.0}


def test_case_count_and_names():
    # 2 sizes, 7 paths (6 through the host, each near and far), 4 GPUs alone and all at once
    assert expected_cases(2, DATAPATHS, 2, 4) == 2 * (6 * 2 + 1) * 5
    assert expected_cases(1, DATAPATHS, 1, 1) == 7
    assert var_base("h2d-ce", "far", "single", "256MiB") == "h2d_ce_far_256MiB"
    assert var_base("local-ce", "device", "all", "1GiB") == "local_ce_all_1GiB"
    assert gpu_name(0, "0000:19:00.0") == "gpu0_0000-19-00.0"


def _side_by_side(tmp_path, ours, theirs):
    native = {"nvbandwidth": {"testcases": [{"name": n, "bandwidth_matrix": [[str(v)]]} for n, v in theirs.items()]}}
    (tmp_path / "nvb.json").write_text("nvbandwidth Version: v0.8\n" + json.dumps(native))
    recs = [{"size": 1 << 29, "scope": "single", "numa": "near", "gpu": 0, "path": p, **fields}
            for p, fields in ours.items()]
    (tmp_path / "ours.json").write_text(json.dumps({"results": recs}))
    return subprocess.run([sys.executable, REPO_SCRIPT, str(tmp_path / "nvb.json"), str(tmp_path / "ours.json")],
                          capture_output=True, text=True)


def test_side_by_side_holds_every_path_to_097(tmp_path):
    theirs = {"host_to_device_memcpy_ce": 55.0, "host_to_device_bidirectional_memcpy_ce": 50.0,
              "device_to_host_bidirectional_memcpy_ce": 48.0}
    ours = {"h2d-ce": {"goodput_GBps": 54.0}, "bidir-ce": {"h2d_GBps": 49.0, "d2h_GBps": 47.0}}
    out = _side_by_side(tmp_path, ours, theirs)
    assert out.returncode == 0 and "every path >= 0.97" in out.stdout, out.stdout
    ours["h2d-ce"]["goodput_GBps"] = 50.0
    out = _side_by_side(tmp_path, ours, theirs)
    assert out.returncode == 1 and "below 0.97" in out.stdout
    out = _side_by_side(tmp_path, {"h2d-sm": {"goodput_GBps": 50.0}}, theirs)
    assert out.returncode == 1 and "no nvbandwidth figure" in out.stdout


def test_perf_values_from_the_records(tmp_path):
    from gpucomm.contract import done_line, result_line
    from gpucomm.rfm.datapaths import case_value, every_case_ok
    recs = [{"size": 256 << 20, "path": "h2d-ce", "numa": "near", "scope": "single", "gpu": g,
             "bus_id": f"0000:{g}:00.0", "goodput_GBps": 50.0 + g, "validated": True} for g in range(2)]
    recs.append({"size": 256 << 20, "path": "h2d-ce", "numa": "near", "scope": "all", "validated": True,
                 "goodput_GBps": 40.0, "gpu_results": [{"gpu": 0, "goodput_GBps": 41.0},
                                                       {"gpu": 1, "goodput_GBps": 40.0}]})
    out = tmp_path / "out"
    out.write_text("\n".join(map(result_line, recs)) + "\n" + done_line({"ok": True}) + "\n")
    assert case_value(str(out), 256 << 20, "h2d-ce", "near", "single", 1).evaluate() == 51.0
    assert case_value(str(out), 256 << 20, "h2d-ce", "near", "single", None).evaluate() == 50.0
    assert case_value(str(out), 256 << 20, "h2d-ce", "near", "all", 0).evaluate() == 41.0
    assert case_value(str(out), 256 << 20, "h2d-ce", "near", "all", None).evaluate() == 40.0
    assert every_case_ok(str(out), 3).evaluate()
    with pytest.raises(Exception, match="2 of 4 cases|3 of 4 cases"):
        every_case_ok(str(out), 4).evaluate()


def test_one_gpu_has_no_slowest_variable_copying_its_own():
    from types import SimpleNamespace

    from gpucomm.rfm.datapaths import DataPathsBase
    for n, gpus in ((1, [(0, "0000:06:00.0")]), (2, [(0, "0000:06:00.0"), (1, "0000:07:00.0")])):
        check = SimpleNamespace(size_list=[256 << 20], perf_sizes="256M", num_tasks=n,
                                path_list=lambda: ["h2d-ce"], numa_labels=lambda: ["near"])
        names = [name for name, _, _ in DataPathsBase.perf_cases(check, gpus)]
        slowest = [name for name in names if name.endswith("_slowest")]
        assert slowest == ([] if n == 1 else ["h2d_ce_256MiB_slowest", "h2d_ce_all_256MiB_slowest"]), names
        assert "h2d_ce_256MiB_gpu0_0000-06-00.0" in names


def test_sizes_without_a_perf_size_report_the_largest_swept():
    # -S sizes=1M,64M with perf_sizes 256M: the 64 MiB values, not a pass that reported nothing
    from types import SimpleNamespace

    from gpucomm.rfm.datapaths import DataPathsBase
    check = SimpleNamespace(size_list=[1 << 20, 64 << 20], perf_sizes="256M", num_tasks=1,
                            path_list=lambda: ["d2h-ce"], numa_labels=lambda: ["near"])
    names = [name for name, _, _ in DataPathsBase.perf_cases(check, [(0, "0000:06:00.0")])]
    assert names == ["d2h_ce_64MiB_gpu0_0000-06-00.0"]
