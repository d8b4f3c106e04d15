"""NodeStateCheck under ReFrame on this (CPU) machine, its local partition made a GPU node (the
probe patched, as test_config_selection.py does) and NVML a stand-in (tests/nvml_standin.py
imported as pynvml in the job): PASS on the reference node, FAIL naming the GPU and the link
with GPUCOMM_TEST_LINK_DOWN, SKIP naming the package without NVML, SKIP naming what to add for a
partition without a node class, one line for an unknown class; and in which modes it runs."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import nvml_standin
from gpucomm.site.nodestate import LINK_DOWN
from reframe_helpers import _MAIN, CONFIG, FAKE_LOCAL, REPO, clean_env, report_cases

TESTS = Path(__file__).resolve().parents[1]


def gpu_node(count, slug="h200", model="NVIDIA H200"):
    return {"gpu_vendor": "nvidia", "gpu_count": count, "gpu_model": model, "gpu_slug": slug, "cupy": None}


def setup(tmp_path, name, node, standin=None, blocked=False):
    """(config file, environment) of one run: the partition faked as ``node``; the job imports
    the stand-in NVML answering for ``standin``, or (``blocked``) no pynvml nor amdsmi at all."""
    work = tmp_path / name
    work.mkdir()
    config = work / "fake_settings.py"
    config.write_text(FAKE_LOCAL.format(patch=node, config=str(CONFIG)))
    shim = work / "shim"
    shim.mkdir()
    env = {}
    if standin is not None:
        (shim / "pynvml.py").write_text(nvml_standin.PYNVML_SHIM)
        (work / "node.json").write_text(json.dumps(standin))
        env["NVML_STANDIN"] = work / "node.json"
    if blocked:
        for module in ("pynvml", "amdsmi"):
            (shim / f"{module}.py").write_text(f"raise ImportError('no module named {module} (blocked)')\n")
    env["PYTHONPATH"] = f"{shim}:{TESTS}"
    return config, env


def start(tmp_path, name, config, env, *args):
    prefix = tmp_path / name / "p"
    cmd = [sys.executable, "-c", _MAIN, "-C", str(config), "-c", "checks/nodestate.py", *args,
           "--prefix", str(prefix), "--report-file", str(prefix / "report.json")]
    return prefix, subprocess.Popen(cmd, cwd=REPO, env=clean_env(**env), text=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{name: (stdout, [test cases])} of the runs below, started together."""
    tmp = tmp_path_factory.mktemp("nodestate")
    plan = {
        "pass": (gpu_node(1), nvml_standin.H200X1, False, {}, ["-r"]),
        "link_down": (gpu_node(2), nvml_standin.H200X2, False, {LINK_DOWN: "1:7"}, ["-r"]),
        "cannot_fire": (gpu_node(1), nvml_standin.H200X1, False, {LINK_DOWN: "0:18"}, ["-r"]),
        "no_nvml": (gpu_node(1), None, True, {}, ["-r"]),
        "no_class": (gpu_node(1, "a40", "NVIDIA A40"), nvml_standin.H200X1, False, {}, ["-r"]),
        "unknown_class": (gpu_node(1), nvml_standin.H200X1, False, {}, ["-r", "-S", "node_class=nope"]),
    }
    procs = {}
    for name, (node, standin, blocked, extra, args) in plan.items():
        config, env = setup(tmp, name, node, standin, blocked)
        procs[name] = start(tmp, name, config, {**env, **extra}, *args)
    out = {}
    for name, (prefix, proc) in procs.items():
        text, _ = proc.communicate(timeout=600)
        report = prefix / "report.json"
        out[name] = (text, report_cases(report) if report.exists() else [])
    return out


def one_case(runs, name):
    text, cases = runs[name]
    assert len(cases) == 1, text[-3000:]
    return text, cases[0]


def test_reference_node_passes_and_keeps_what_it_read(runs):
    text, case = one_case(runs, "pass")
    assert case["result"] == "pass", (case["fail_reason"], text[-3000:])
    assert case["system"] == "local" and case["partition"] == "h200x1"
    assert "(h200-sxm-1gpu)" in case["descr"]
    kept = json.loads((Path(case["outputdir"]) / "gpucomm_nodestate.json").read_text())
    assert kept["ok"] and kept["node_class"] == "h200-sxm-1gpu"
    assert kept["gpus"][0]["pcie"] == {"gen": 5, "max_gen": 5, "width": 16, "max_width": 16}
    expected = json.loads((Path(case["outputdir"]) / "gpucomm_nodestate_expected.json").read_text())
    assert expected["links_up"] == 0 and expected["name"] == "h200-sxm-1gpu"
    script = (Path(case["outputdir"]) / "rfm_job.sh").read_text()
    assert "-m gpucomm.site.nodestate --expect gpucomm_nodestate_expected.json --json gpucomm_nodestate.json" in script
    assert "mpirun" not in script  # no launcher: the batch script runs on the node


def test_link_down_hook_fails_naming_gpu_and_link(runs):
    text, case = one_case(runs, "link_down")
    assert case["result"] == "fail" and case["fail_phase"] == "sanity", text[-3000:]
    assert f"GPU 1 (0000:39:00.0) NVLink 7: down ({LINK_DOWN}), expected up at 25 GB/s" in case["fail_reason"]


def test_hook_that_cannot_fire_fails_saying_so(runs):
    text, case = one_case(runs, "cannot_fire")
    assert case["result"] == "fail", text[-3000:]
    assert f"{LINK_DOWN}=0:18 cannot fire: GPU 0 has no NVLink 18 (NVLink slots 0-17)" in case["fail_reason"]


def test_without_nvml_it_skips_naming_the_package(runs):
    text, case = one_case(runs, "no_nvml")
    assert case["result"] == "skip", text[-3000:]
    (line,) = [ln for ln in text.splitlines() if "SKIP" in ln and "NodeStateCheck" in ln]
    assert "no GPU library: install nvidia-ml-py (nvidia" in line, line


def test_partition_without_a_class_skips_naming_what_to_add(runs):
    text, case = one_case(runs, "no_class")
    assert case["result"] == "skip", text[-3000:]
    (line,) = [ln for ln in text.splitlines() if "SKIP" in ln and "NodeStateCheck" in ln]
    assert "no node class for partition local:a40x1: add it to PARTITIONS in config/nodeclasses.py" in line


def test_unknown_class_is_one_clear_line(runs):
    text, case = one_case(runs, "unknown_class")
    assert case["result"] == "fail" and case["fail_phase"] == "setup", text[-3000:]
    assert ("unknown node class 'nope' (-S node_class): config/nodeclasses.py has a100-sxm4-64gb-x4, "
            "gh200-x4, h200-sxm-1gpu, h200-sxm-nv18, mi250x-x4") in case["fail_reason"]


@pytest.mark.parametrize("mode, selected", [("health", True), ("acceptance", True), ("paper", False),
                                            ("noise", False), (None, True)])
def test_modes_that_select_it(tmp_path, mode, selected):
    """Every GPU partition, in health and acceptance (config/modes.py), never in paper or noise."""
    out = subprocess.run([sys.executable, "-c", _MAIN, "-C", str(CONFIG), "--system", "alps", "-c",
                          "checks/nodestate.py", *(["--mode", mode] if mode else []), "-l"],
                         cwd=REPO, env=clean_env(GPUCOMM_PYTHON="/venv/bin/python"), text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:]
    listed = [ln.split()[1] for ln in out.stdout.splitlines() if ln.startswith("- ")]
    assert listed == (["NodeStateCheck"] if selected else []), out.stdout[-3000:]
