"""The node-state reader (gpucomm.site.nodestate) over a stand-in NVML (tests/nvml_standin.py)
and a stand-in sysfs tree: links up and down, a degraded PCIe link, ECC errors, throttling, the
link-down fault hook, and no NVML at all; and the node classes' file (config/nodeclasses.py)."""

import copy
import json
import runpy
import sys
from pathlib import Path

import pytest

import nvml_standin
from gpucomm.constants import EXIT_BAD_INPUT, EXIT_CAPABILITY, EXIT_HARDWARE, EXIT_OK
from gpucomm.contract import NODESTATE_TAG
from gpucomm.site import nodestate
from gpucomm.site.nodestate import LINK_DOWN

REPO = Path(__file__).resolve().parents[2]
CLASSES = runpy.run_path(str(REPO / "config" / "nodeclasses.py"))


@pytest.fixture
def nvml(monkeypatch):
    """Install a stand-in pynvml for ``node``; returns the installer."""
    def install(node=None, **kw):
        module = nvml_standin.make(node, **kw)
        monkeypatch.setitem(sys.modules, "pynvml", module)
        return module
    return install


@pytest.fixture
def sysfs(tmp_path):
    """A sysfs tree with one Ethernet NIC (up, 100 Gb/s), a virtual one, and an IB port."""
    root = tmp_path / "sys"
    for name, state, speed, physical in (("eth0", "up", "100000", True), ("docker0", "up", "-1", False)):
        d = root / "class" / "net" / name
        d.mkdir(parents=True)
        (d / "operstate").write_text(state + "\n")
        (d / "speed").write_text(speed + "\n")
        if physical:
            (d / "device").mkdir()
    port = root / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    port.mkdir(parents=True)
    (port / "state").write_text("4: ACTIVE\n")
    (port / "rate").write_text("100 Gb/sec (2X HDR)\n")
    return root


def expect_file(tmp_path, name, **over):
    path = tmp_path / "expected.json"
    path.write_text(json.dumps(dict(CLASSES["expected"](name), **over)))
    return str(path)


def run(tmp_path, sysfs, *args, env=None):
    """(exit code, record, stdout, stderr) of the reader's command."""
    out = tmp_path / "state.json"
    import io
    from contextlib import redirect_stderr, redirect_stdout
    stdout, stderr = io.StringIO(), io.StringIO()
    with redirect_stdout(stdout), redirect_stderr(stderr):
        code = nodestate.main([*args, "--json", str(out), "--sysfs", str(sysfs)], environ=env or {})
    line = [x for x in stdout.getvalue().splitlines() if x.startswith(NODESTATE_TAG + " ")]
    assert len(line) == 1
    record = json.loads(line[0][len(NODESTATE_TAG) + 1:])
    assert json.loads(out.read_text()) == record  # --json keeps the same record
    return code, record, stdout.getvalue(), stderr.getvalue()


def test_reference_node_passes_and_reads_everything(nvml, tmp_path, sysfs):
    """The lent H200 as NVML showed it: gen 5 x16, no ECC error, idle, 18 slots Not Supported."""
    nvml()
    code, record, out, err = run(tmp_path, sysfs, "--expect", expect_file(tmp_path, "h200-sxm-1gpu"))
    assert code == EXIT_OK and record["ok"] and record["problems"] == [] and err == ""
    (gpu,) = record["gpus"]
    assert gpu["name"] == "NVIDIA H200" and gpu["pci_bus_id"] == "0000:19:00.0"
    assert gpu["pcie"] == {"gen": 5, "max_gen": 5, "width": 16, "max_width": 16}
    assert gpu["ecc_volatile_uncorrected"] == 0 and gpu["clocks_event_reasons"] == 1 and gpu["idle"]
    assert [entry["state"] for entry in gpu["links"]] == ["not supported"] * 18
    assert gpu["pages"] == {"retired_sbe": 0, "retired_dbe": 0, "retirement_pending": False,
                            "remapped_correctable": 0, "remapped_uncorrectable": 0,
                            "remap_pending": False, "remap_failure": False}
    assert [n["name"] for n in record["nics"]] == ["eth0", "mlx5_0/1"]  # docker0 is virtual
    assert record["nics"][1] == {"name": "mlx5_0/1", "kind": "ib", "state": "active", "rate_Gbps": 100.0}
    assert record["node_class"] == "h200-sxm-1gpu" and record["library"]["package"] == "nvidia-ml-py"


def test_without_expectations_it_only_reads(nvml, tmp_path, sysfs):
    nvml(nvml_standin.H200X2)
    code, record, out, _ = run(tmp_path, sysfs)
    assert code == EXIT_OK and record["judged"] is False and len(record["gpus"]) == 2
    assert all(e["state"] == "up" and e["speed_GBps"] == 26.562 for e in record["gpus"][1]["links"])
    assert "GPU 1 (0000:39:00.0) NVIDIA H200: PCIe gen 5/5 x16/16, links up 18/18" in out


def test_nv18_node_passes_with_every_link_up(nvml, tmp_path, sysfs):
    nvml(nvml_standin.H200X2)
    code, record, _, _ = run(tmp_path, sysfs, "--expect", expect_file(tmp_path, "h200-sxm-nv18"))
    assert code == EXIT_OK, record["problems"]


def test_a_link_down_fails_naming_gpu_and_link(nvml, tmp_path, sysfs):
    node = copy.deepcopy(nvml_standin.H200X2)
    node["gpus"][1]["links"][7] = "down"
    nvml(node)
    code, record, _, err = run(tmp_path, sysfs, "--expect", expect_file(tmp_path, "h200-sxm-nv18"))
    assert code == EXIT_HARDWARE and not record["ok"]
    assert record["problems"] == ["GPU 1 (0000:39:00.0) NVLink 7: down, expected up at 25 GB/s"]
    assert "GPU 1 (0000:39:00.0) NVLink 7: down" in err


def test_missing_links_and_slow_links(nvml, tmp_path, sysfs):
    """A class expecting 18 links on a GPU that shows none (the one-GPU board), and a slow one."""
    nvml()  # the default: H200X1, every slot Not Supported
    code, record, _, _ = run(tmp_path, sysfs, "--expect", expect_file(tmp_path, "h200-sxm-nv18", gpus=1))
    assert record["problems"] == ["GPU 0 (0000:19:00.0): 0 NVLink links up, expected 18 at 25 GB/s "
                                  "(NVLink 0-17: not supported)"]
    nvml({"driver": "x", "gpus": [nvml_standin.gpu(0, links=["up"] * 18, speed_MBps=12500)]})
    code, record, _, _ = run(tmp_path, sysfs, "--expect", expect_file(tmp_path, "h200-sxm-nv18", gpus=1))
    assert code == EXIT_HARDWARE and len(record["problems"]) == 18
    assert record["problems"][0] == "GPU 0 (0000:19:00.0) NVLink 0: up at 12.5 GB/s, expected 25 GB/s"


@pytest.mark.parametrize("over, problem", [
    ({"pcie": [5, 5, 8, 16]}, "GPU 0 (0000:19:00.0): PCIe x8, expected x16"),
    ({"pcie": [4, 4, 16, 16]}, "GPU 0 (0000:19:00.0): PCIe gen 4 at most, expected gen 5"),
    ({"pcie": [1, 5, 16, 16], "reasons": 0x0}, "GPU 0 (0000:19:00.0): PCIe gen 1, expected gen 5"),
    ({"ecc": 3}, "GPU 0 (0000:19:00.0): 3 volatile uncorrected ECC errors"),
    ({"pending": True}, "GPU 0 (0000:19:00.0): a page retirement is pending (reset the GPU, then check again)"),
    ({"rows": [0, 1, 1, 0]}, "GPU 0 (0000:19:00.0): a row remapping is pending (reset the GPU, then check again)"),
    ({"rows": [0, 0, 0, 1]}, "GPU 0 (0000:19:00.0): row remapping failed"),
    ({"reasons": 0x40 | 0x1}, "GPU 0 (0000:19:00.0): clocks held down by HW thermal slowdown"),
    ({"reasons": 0x88}, "GPU 0 (0000:19:00.0): clocks held down by HW slowdown, HW power brake slowdown"),
    ({"name": "NVIDIA H100 80GB HBM3"}, "GPU 0 (0000:19:00.0): NVIDIA H100 80GB HBM3, expected H200"),
])
def test_each_fault_is_one_problem(nvml, tmp_path, sysfs, over, problem):
    nvml({"driver": "x", "gpus": [nvml_standin.gpu(0, **over)]})
    code, record, _, _ = run(tmp_path, sysfs, "--expect", expect_file(tmp_path, "h200-sxm-1gpu"))
    assert code == EXIT_HARDWARE and record["problems"] == [problem]


@pytest.mark.parametrize("reasons", [0x1, 0x2, 0x4, 0x10, 0x100, 0x0])
def test_benign_clock_reasons_pass(nvml, tmp_path, sysfs, reasons):
    nvml({"driver": "x", "gpus": [nvml_standin.gpu(0, reasons=reasons)]})
    code, record, _, _ = run(tmp_path, sysfs, "--expect", expect_file(tmp_path, "h200-sxm-1gpu"))
    assert code == EXIT_OK, record["problems"]


def test_idle_gpu_may_lower_its_pcie_generation(nvml, tmp_path, sysfs):
    nvml({"driver": "x", "gpus": [nvml_standin.gpu(0, pcie=[1, 5, 16, 16], reasons=0x1)]})
    code, record, _, _ = run(tmp_path, sysfs, "--expect", expect_file(tmp_path, "h200-sxm-1gpu"))
    assert code == EXIT_OK
    assert record["notes"] == ["GPU 0 (0000:19:00.0): PCIe gen 1 now, idle (gen 5 expected under load)"]


def test_gpu_count_and_nics(nvml, tmp_path, sysfs):
    nvml()
    nics = {"kind": "ib", "names": "mlx5_*/1", "count": 4, "rate_Gbps": 200}
    code, record, _, _ = run(tmp_path, sysfs, "--expect", expect_file(tmp_path, "h200-sxm-1gpu", gpus=2, nics=nics))
    assert record["problems"] == ["1 GPUs, expected 2 x H200 (found: GPU 0 (0000:19:00.0) NVIDIA H200)",
                                  "1 NICs mlx5_*/1, expected 4 (mlx5_0/1)",
                                  "NIC mlx5_0/1: up at 100 Gb/s, expected 200 Gb/s"]
    (sysfs / "class" / "net" / "eth0" / "operstate").write_text("down\n")
    nics = {"kind": "net", "names": "eth*", "count": 1, "rate_Gbps": 100}
    code, record, _, _ = run(tmp_path, sysfs, "--expect", expect_file(tmp_path, "h200-sxm-1gpu", nics=nics))
    assert record["problems"] == ["NIC eth0: down, expected up at 100 Gb/s"]


def test_fault_hook_forces_the_link_down(nvml, tmp_path, sysfs):
    nvml(nvml_standin.H200X2)
    code, record, _, _ = run(tmp_path, sysfs, "--expect", expect_file(tmp_path, "h200-sxm-nv18"),
                             env={LINK_DOWN: "1:7"})
    assert code == EXIT_HARDWARE and record["fault"] == f"{LINK_DOWN}=1:7"
    assert record["problems"] == [f"GPU 1 (0000:39:00.0) NVLink 7: down ({LINK_DOWN}), expected up at 25 GB/s"]


def test_fault_hook_on_a_not_supported_slot_fires(nvml, tmp_path, sysfs):
    """The one-GPU board: its slots answer Not Supported, the hook still has a slot to force."""
    nvml()
    code, record, _, _ = run(tmp_path, sysfs, "--expect", expect_file(tmp_path, "h200-sxm-1gpu"),
                             env={LINK_DOWN: "0:17"})
    assert code == EXIT_HARDWARE
    assert record["problems"] == [f"GPU 0 (0000:19:00.0) NVLink 17: down ({LINK_DOWN}), expected up"]


@pytest.mark.parametrize("spec, error", [
    ("2:0", f"{LINK_DOWN}=2:0 cannot fire: there is no GPU 2 (GPUs: 0)"),
    ("0:18", f"{LINK_DOWN}=0:18 cannot fire: GPU 0 has no NVLink 18 (NVLink slots 0-17)"),
    ("zero:1", f"bad {LINK_DOWN}='zero:1': expected GPU:LINK (indices, e.g. 1:7)"),
])
def test_fault_hook_that_cannot_fire_is_an_error(nvml, tmp_path, sysfs, spec, error):
    nvml()
    code, record, _, err = run(tmp_path, sysfs, "--expect", expect_file(tmp_path, "h200-sxm-1gpu"),
                               env={LINK_DOWN: spec})
    assert code == EXIT_BAD_INPUT and not record["ok"] and record["error"] == error
    assert error in err


def test_no_nvml_package_is_a_skip_naming_it(monkeypatch, tmp_path, sysfs):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    code, record, _, err = run(tmp_path, sysfs, "--expect", expect_file(tmp_path, "h200-sxm-1gpu"))
    assert code == EXIT_CAPABILITY and not record["ok"]
    assert record["skip"].startswith("no GPU library: install nvidia-ml-py (nvidia: pip install "
                                     "'gpucomm[nodestate]') in ")
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    code, record, _, _ = run(tmp_path, sysfs)
    assert "or amdsmi (amd: pip install 'gpucomm[nodestate-amd]')" in record["skip"]


def test_nvml_that_does_not_initialise_is_a_problem(nvml, tmp_path, sysfs):
    nvml(init_error=nvml_standin.NVML_ERROR_LIBRARY_NOT_FOUND)
    code, record, _, _ = run(tmp_path, sysfs, "--expect", expect_file(tmp_path, "h200-sxm-1gpu"))
    assert code == EXIT_HARDWARE
    assert record["problems"][0] == "NVML does not initialise: NVML Shared Library Not Found"


def test_bad_expectation_file(tmp_path, sysfs):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    code, record, _, _ = run(tmp_path, sysfs, "--expect", str(bad))
    assert code == EXIT_BAD_INPUT and "not a JSON object" in record["error"]


def test_every_partition_names_a_known_class_and_every_class_cites():
    """config/nodeclasses.py: each partition's class exists; each class has a vendor and at
    least one judged value; the file prints a class as the reader's --expect file."""
    from gpucomm.rfm.nodestate import JUDGED_KEYS
    for partition, name in CLASSES["PARTITIONS"].items():
        assert name in CLASSES["CLASSES"], partition
    for name, values in CLASSES["CLASSES"].items():
        assert values["vendor"] in nodestate.VENDORS
        assert any(values.get(k) is not None for k in JUDGED_KEYS), name
    import subprocess
    out = subprocess.run([sys.executable, str(REPO / "config" / "nodeclasses.py"), "gh200-x4"],
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out)["links_up"] == 18 and json.loads(out)["name"] == "gh200-x4"


def test_an_expected_vendor_it_cannot_read_is_one_line(tmp_path, sysfs):
    """Old: --expect with vendor "intel" ended in a KeyError traceback."""
    code, record, _, err = run(tmp_path, sysfs, "--expect", expect_file(tmp_path, "h200-sxm-1gpu", vendor="intel"))
    assert code == EXIT_BAD_INPUT and "vendor 'intel': choose nvidia, amd" in record["error"]
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("where", ["folder", "missing-parent"])
def test_a_json_file_that_cannot_be_written_is_one_line(tmp_path, sysfs, capsys, where):
    """Old: --json onto a folder, or where no file can be made, ended in a traceback."""
    target = tmp_path if where == "folder" else tmp_path / "no" / "such" / "state.json"
    code = nodestate.main(["--json", str(target), "--sysfs", str(sysfs)], environ={})
    out, err = capsys.readouterr()
    assert code == EXIT_BAD_INPUT and "Traceback" not in out + err
    (line,) = err.strip().splitlines()
    assert f"nodestate: --json {target}: cannot write it" in line
