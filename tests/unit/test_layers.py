"""The layers' import rules (docs/architecture.md), read from the source: a payload module that
imports ReFrame, pandas or matplotlib, or the ReFrame library reaching into the payload, fails
here.  And a payload run with those packages made unimportable still works."""

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "gpucomm"

#: modules every layer may use: the shared vocabulary
SHARED = {"gpucomm", "gpucomm.constants", "gpucomm.contract", "gpucomm.errors", "gpucomm.sizes",
          "gpucomm.metrics", "gpucomm.pairs"}
#: layer -> (gpucomm packages it may import besides SHARED, third-party top-level packages)
RULES = {
    "payload": ({"gpucomm.payload"}, {"numpy", "mpi4py", "cupy", "cupyx"}),
    "native": ({"gpucomm.native"}, set()),
    "site": ({"gpucomm.site"}, set()),
    "rfm": ({"gpucomm.rfm", "gpucomm.native", "gpucomm.site"}, {"reframe", "yaml"}),
    "analysis": ({"gpucomm.analysis", "gpucomm.native", "gpucomm.data"},
                 {"numpy", "pandas", "matplotlib", "PIL", "yaml"}),
    "data": (set(), set()),
    "shared": (set(), {"numpy"}),
}
#: the command dispatcher (and ``python -m gpucomm``) may name every layer, but imports them
#: only when a command runs
DISPATCHER = ("gpucomm.main", "gpucomm.__main__")


def module_name(path):
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in RULES else "shared"


def imports_of(path):
    """(imported module, line) for every import statement, relative ones resolved."""
    mod = module_name(path)
    package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
                names = [target] if node.module else [_submodule(target, a.name) for a in node.names]
                for name in names:
                    yield name, node.lineno
            else:
                yield node.module, node.lineno


def _submodule(package, name):
    """``from PACKAGE import name``: the submodule if there is one, else the package itself."""
    path = SRC.parent.joinpath(*package.split("."), name)
    return f"{package}.{name}" if path.is_dir() or path.with_suffix(".py").exists() else package


def allowed(layer, target):
    own, third = RULES[layer]
    top = target.split(".")[0]
    if top == "gpucomm":  # the package itself (its __version__), a shared module, or its own layer
        return target in SHARED | own or any(target.startswith(m + ".") for m in own | (SHARED - {"gpucomm"}))

    return top in sys.stdlib_module_names or top in third


def violations():
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        mod = module_name(path)
        if mod in DISPATCHER:
            continue
        layer = layer_of(mod)
        for target, line in imports_of(path):
            # gpucomm.X as a package name resolves to its module: accept a shared module's name
            if target.split(".")[0] == "gpucomm" and any(target.startswith(s + ".") for s in SHARED - {"gpucomm"}):
                target = ".".join(target.split(".")[:2])
            if not allowed(layer, target):
                bad.append(f"{path.relative_to(SRC.parent)}:{line}: {layer} layer imports {target}")
    return bad


def test_import_rules_hold():
    assert violations() == []


def test_rule_catches_a_payload_import_of_reframe(tmp_path, monkeypatch):
    """The rule itself works: a payload module importing reframe (or pandas) is reported."""
    fake = SRC / "payload" / "_layer_probe_tmp.py"
    fake.write_text("import reframe\nfrom pandas import DataFrame\nfrom ..analysis import compare\n")
    try:
        bad = violations()
    finally:
        fake.unlink()
    assert any("imports reframe" in b for b in bad)
    assert any("imports pandas" in b for b in bad)
    assert any("imports gpucomm.analysis" in b for b in bad)


BLOCKER = textwrap.dedent("""
    import sys
    class _Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("reframe", "pandas", "matplotlib", "yaml"):
                raise ImportError(f"{name} is not installed (payload-only venv)")
    sys.meta_path.insert(0, _Block())
""")


@pytest.mark.mpirun
def test_payload_runs_without_rfm_and_report_packages(mpirun, tmp_path):
    """A payload-only install: ReFrame, pandas, matplotlib and yaml unimportable, the payload
    still runs and validates."""
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))}
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8,1M", "--iters", "20", extra_env=env)
    assert run.returncode == 0, run.stderr
    assert '"ok": true' in run.stdout
    probe = subprocess.run([sys.executable, "-c", "import gpucomm.payload.engine, gpucomm.main, reframe"],
                           env=dict(os.environ, **env), capture_output=True, text=True)
    assert "payload-only venv" in probe.stderr  # the blocker is active in that environment
