"""One declaration per method and per operation (constants.METHOD_DECLS, OPERATION_DECLS), read
by every layer: a seventh method, one payload file plus its declaration and nothing else edited,
is picked up by the payload's registry, the ReFrame library's availability (its skip reasons),
the checks (a dry-run job script that launches it), the references (beyond the paper) and the
report (its colour); and the docs' method table lists every declared method."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpucomm import constants
from gpucomm.analysis.report import render
from gpucomm.payload.methods import REGISTRY as METHODS_REGISTRY
from gpucomm.payload.ops import REGISTRY as OPS_REGISTRY

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
from reframe_helpers import clean_env, reframe_cmd, report_cases  # noqa: E402

#: the seventh method: its file, and its declaration (the one line added to constants.py)
DUMMY_FILE = '''"""A seventh method, for the declaration test: host MPI under another name."""
from .host import HostMethod


class DummyMethod(HostMethod):
    name = "dummy"
'''
DUMMY_DECL = '    MethodDecl("dummy", "dummy:DummyMethod", ("+gpu",), ("+mpi",), None, "#123456"),\n'


def test_the_registries_are_the_declarations():
    assert [m.name for m in METHODS_REGISTRY.values()] == list(constants.METHODS)
    assert [o.name for o in OPS_REGISTRY.values()] == list(constants.OPERATIONS)
    assert render.COLORS == {d.name: d.color for d in constants.METHOD_DECLS}
    assert set(constants.PAPER_METHOD) | set(constants.BEYOND_PAPER) == set(constants.METHODS)


def test_the_method_table_lists_every_declared_method():
    readme = (REPO / "README.md").read_text()
    table = readme[readme.index("| method | what moves the data |"):].split("\n\n")[0]
    assert re.findall(r"^\| `([\w-]+)` \|", table, re.M) == list(constants.METHODS)


def _tree_with_a_seventh_method(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(REPO / "src" / "gpucomm", src / "gpucomm", ignore=shutil.ignore_patterns("__pycache__"))
    consts = src / "gpucomm" / "constants.py"
    text = consts.read_text()
    end = text.index("\n)\n", text.index("METHOD_DECLS = (")) + 1
    consts.write_text(text[:end] + DUMMY_DECL + text[end:])
    (src / "gpucomm" / "payload" / "methods" / "dummy.py").write_text(DUMMY_FILE)
    return src


@pytest.mark.reframe
def test_a_seventh_method_is_picked_up_by_every_layer(tmp_path):
    src = _tree_with_a_seventh_method(tmp_path)
    env = clean_env(PYTHONPATH=str(src))
    probe = """
import json
from types import SimpleNamespace as NS
from gpucomm import constants
from gpucomm.payload.methods import get_method
from gpucomm.rfm.availability import unavailable
from gpucomm.analysis.report import render
from gpucomm.analysis import references
part = NS(fullname="x:cpu", features=["gpucomm"], select_devices=lambda kind: [])
gpu = NS(fullname="x:gpu", features=["gpucomm", "gpu"], select_devices=lambda kind: [NS(num_devices=1)])
environ = NS(name="e", features=["mpi"], extras={})
print(json.dumps({"file": constants.__file__, "methods": constants.METHODS, "class": get_method("dummy").__name__,
                  "cpu": unavailable("dummy", "pingpong", part, environ, 2),
                  "gpus": unavailable("dummy", "pingpong", gpu, environ, 2),
                  "color": render.COLORS.get("dummy"), "beyond": "dummy" in constants.BEYOND_PAPER,
                  "paper": "dummy" in references.METHOD_OF.values()}))
"""
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["file"].startswith(str(src))
    assert got["methods"][-1] == "dummy" and got["class"] == "DummyMethod"
    assert got["cpu"] == "partition x:cpu lacks +gpu"
    assert got["gpus"] == "dummy needs 2 GPUs on a node; x:gpu has 1"
    assert got["color"] == "#123456" and got["beyond"] and not got["paper"]
    # the checks: a dry run on Alps writes a ping-pong job script that launches it
    prefix = tmp_path / "rfm"
    run = subprocess.run(reframe_cmd("--system", "alps", "-c", "checks/pingpong.py", "-n", "%method=dummy",
                                     "--dry-run", "--prefix", prefix, "--report-file", prefix / "report.json"),
                         cwd=REPO, env={**env, "SBATCH_ACCOUNT": "x", "GPUCOMM_PYTHON": "/venv/bin/python"},
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:]
    cases = report_cases(prefix / "report.json")
    assert [c["display_name"] for c in cases] == ["PingPongCheck %method=dummy"]
    script = (Path(cases[0]["stagedir"]) / "rfm_job.sh").read_text()
    assert "/venv/bin/python -m gpucomm pingpong --method dummy " in script
    assert "-m gpucomm preflight --method dummy " in script
    assert os.path.exists(prefix / "report.json")


def test_every_perf_variables_unit_declares_its_direction():
    """Each perf variable's direction is declared once, with its unit (contract.PERF_UNIT_DIRECTION):
    every unit of the perf points and every unit literal the ReFrame library gives a perf
    variable is in that table (a new unit without a direction would be judged by no rule)."""
    from gpucomm import contract
    units = {point[2] for name in dir(contract) if name.endswith("PERF_POINTS")
             for point in getattr(contract, name).values()}
    for path in (REPO / "src" / "gpucomm" / "rfm").glob("*.py"):
        text = path.read_text()
        units |= set(re.findall(r'\(f"[^"]*\{label\}",\s*"[a-z_]+",\s*"([^"]+)"\)', text))  # noise's (name, what, unit)
        units |= set(re.findall(r'make_performance_function\((?:[^()]|\([^()]*\))*?,\s*"([^"]+)"\)', text))
    assert units and units <= set(contract.PERF_UNIT_DIRECTION), units - set(contract.PERF_UNIT_DIRECTION)
