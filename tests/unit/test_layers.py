"""The layers' import rules (docs/architecture.md), read from the source: a payload module that
imports ReFrame, pandas or matplotlib, or the ReFrame library reaching into the payload, fails
here; so does numba or numba-mpi anywhere but as the payload's one optional import (inside a
function of payload/fastloop.py, guarded by ``except ImportError``).  And a payload run with those
packages made unimportable still works."""

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gpucomm.constants import LOOP_AUTO, LOOP_ENV

SRC = Path(__file__).resolve().parents[2] / "src" / "gpucomm"

#: modules every layer may use: the shared vocabulary
SHARED = {"gpucomm", "gpucomm.constants", "gpucomm.contract", "gpucomm.errors", "gpucomm.sizes",
          "gpucomm.metrics", "gpucomm.pairs", "gpucomm.procs"}
#: layer -> (gpucomm packages it may import besides SHARED, third-party top-level packages)
RULES = {
    "payload": ({"gpucomm.payload"}, {"numpy", "mpi4py", "cupy", "cupyx"}),
    "native": ({"gpucomm.native"}, set()),
    "site": ({"gpucomm.site"}, set()),
    "rfm": ({"gpucomm.rfm", "gpucomm.native", "gpucomm.site"}, {"reframe", "yaml"}),
    "analysis": ({"gpucomm.analysis", "gpucomm.native", "gpucomm.data"},
                 {"numpy", "pandas", "matplotlib", "PIL", "yaml", "scipy"}),
    "data": (set(), set()),
    "shared": (set(), {"numpy"}),
}
#: optional packages: layer -> (the one module that may import them, the packages); only inside
#: a function and a ``try`` whose handlers catch ImportError, so that the layer runs without them
OPTIONAL = {"payload": ("gpucomm.payload.fastloop", {"numba", "numba_mpi", "llvmlite"}),
            # the node-state reader: the GPU vendors' libraries (nvidia-ml-py, amdsmi)
            "site": ("gpucomm.site.nodestate", {"pynvml", "amdsmi"})}
#: the module of compiled code behind the guard: it imports numba at import time, so that numba
#: can cache its functions, and only the guarded import in fastloop may import it
BEHIND_GUARD = {"gpucomm.payload.mpiloops": ("gpucomm.payload.fastloop", {"numba"})}
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


def guarded_lines(tree):
    """Lines of the import statements that sit inside a function and inside the body of a
    ``try`` with an ``except ImportError`` (alone or in a tuple)."""
    lines = set()

    def catches_import_error(handler):
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        return any(isinstance(k, ast.Name) and k.id in ("ImportError", "ModuleNotFoundError") for k in kinds)

    def visit(node, in_function, guarded):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and in_function and guarded:
            lines.add(node.lineno)
        if isinstance(node, ast.Try):
            safe = any(catches_import_error(h) for h in node.handlers)
            for child in node.body:
                visit(child, in_function, guarded or safe)
            for child in node.handlers + node.orelse + node.finalbody:
                visit(child, in_function, guarded)
            return
        func = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, in_function or func, guarded and not func)

    visit(tree, False, False)
    return lines


def imports_of(path, mod=None):
    """(imported module, line, guarded) for every import statement, relative ones resolved;
    guarded: inside a function and a try that catches ImportError (guarded_lines)."""
    mod = mod or module_name(path)
    package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text(), str(path))
    guarded = guarded_lines(tree)
    for target, line in _imports(tree, package):
        yield target, line, line in guarded


def _imports(tree, package):
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


def optional_ok(layer, mod, target, guarded):
    """Whether ``target`` is the layer's optional package, imported where the rule allows it."""
    where, packages = OPTIONAL.get(layer, (None, set()))
    if mod in BEHIND_GUARD and target.split(".")[0] in BEHIND_GUARD[mod][1]:
        return True
    return target.split(".")[0] in packages and mod == where and guarded


def behind_guard_violation(mod, target, guarded):
    """A module behind the guard imported from anywhere but its guard's guarded import."""
    if target in BEHIND_GUARD and not (mod == BEHIND_GUARD[target][0] and guarded):
        return f"imports {target} (only inside a function of {BEHIND_GUARD[target][0]}, guarded by except ImportError)"
    return None


def module_violations(path, mod):
    """The rule's complaints about one module's imports."""
    bad = []
    layer = layer_of(mod)
    for target, line, guarded in imports_of(path, mod):
        # gpucomm.X as a package name resolves to its module: accept a shared module's name
        if target.split(".")[0] == "gpucomm" and any(target.startswith(s + ".") for s in SHARED - {"gpucomm"}):
            target = ".".join(target.split(".")[:2])
        behind = behind_guard_violation(mod, target, guarded)
        if behind:
            rel = path.relative_to(SRC.parent) if path.is_relative_to(SRC.parent) else path
            bad.append(f"{rel}:{line}: {layer} layer {behind}")
            continue
        if not allowed(layer, target) and not optional_ok(layer, mod, target, guarded):
            where, packages = OPTIONAL.get(layer, (None, set()))
            why = (f" (optional: only inside a function of {where}, guarded by except ImportError)"
                   if target.split(".")[0] in packages else "")
            rel = path.relative_to(SRC.parent) if path.is_relative_to(SRC.parent) else path
            bad.append(f"{rel}:{line}: {layer} layer imports {target}{why}")
    return bad


def violations():
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        mod = module_name(path)
        if mod in DISPATCHER:
            continue
        bad += module_violations(path, mod)
    return bad


def test_import_rules_hold():
    assert violations() == []


def test_rule_catches_a_payload_import_of_reframe(tmp_path, monkeypatch):
    """The rule itself works: a payload module importing reframe (or pandas) is reported."""
    # a module of the payload package, written outside the tree (the other tests read the tree
    # meanwhile, on other workers)
    fake = tmp_path / "_layer_probe_tmp.py"
    fake.write_text("import reframe\nfrom pandas import DataFrame\nfrom ..analysis import compare\n")
    bad = module_violations(fake, "gpucomm.payload._layer_probe_tmp")
    assert any("imports reframe" in b for b in bad)
    assert any("imports pandas" in b for b in bad)
    assert any("imports gpucomm.analysis" in b for b in bad)


FASTLOOP = "gpucomm.payload.fastloop"
GUARDED = textwrap.dedent("""
    def load():
        try:
            import numba
            from numba_mpi import common
        except ImportError:
            return None
""")


@pytest.mark.parametrize("source, mod, reported", [
    (GUARDED, FASTLOOP, False),                                     # the one allowed form
    ("import numba\n", FASTLOOP, True),                             # at import time
    ("try:\n    import numba\nexcept ImportError:\n    pass\n", FASTLOOP, True),  # not in a function
    ("def load():\n    import numba_mpi\n", FASTLOOP, True),         # not guarded
    (GUARDED.replace("ImportError", "ValueError"), FASTLOOP, True),  # guarded against something else
    (GUARDED, "gpucomm.payload.engine", True),                      # another payload module
    (GUARDED, "gpucomm.rfm.base", True),                            # another layer
    ("import numba\n", "gpucomm.payload.mpiloops", False),          # the compiled loops' module
    ("import numba_mpi\n", "gpucomm.payload.mpiloops", True),       # ... numba only
    ("from . import mpiloops\n", "gpucomm.payload.engine", True),   # imported elsewhere
    ("def load():\n    try:\n        from . import mpiloops\n    except ImportError:\n        pass\n",
     FASTLOOP, False),                                              # its guarded import
    ("from . import mpiloops\n", FASTLOOP, True),                   # unguarded, even in fastloop
])
def test_numba_only_as_the_payloads_optional_import(tmp_path, source, mod, reported):
    """numba and numba-mpi: in the payload only, in payload/fastloop.py only, imported inside a
    function and guarded by except ImportError (the fast path is optional)."""
    path = tmp_path / "probe.py"
    path.write_text(source)
    bad = module_violations(path, mod)
    assert bool(bad) == reported, bad
    if reported:
        assert any("numba" in b or "mpiloops" in b for b in bad)


def test_fastloop_imports_numba_the_guarded_way():
    """The real module uses the exception: its numba imports are guarded, none at import time."""
    path = SRC / "payload" / "fastloop.py"
    targets = [(t, g) for t, _, g in imports_of(path) if t.split(".")[0] in ("numba", "numba_mpi")]
    assert targets and all(g for _, g in targets)


BLOCKER = textwrap.dedent("""
    import sys
    class _Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("reframe", "pandas", "matplotlib", "yaml", "scipy", "numba", "numba_mpi"):
                raise ImportError(f"{name} is not installed (payload-only venv)")
    sys.meta_path.insert(0, _Block())
""")


@pytest.mark.mpirun
def test_payload_runs_without_rfm_and_report_packages(mpirun, tmp_path):
    """A payload-only install: ReFrame, pandas, matplotlib, yaml and the optional numba-mpi
    unimportable, the payload still runs and validates (mpi4py's timed loop)."""
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])),
           LOOP_ENV: LOOP_AUTO}
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8,1M", "--iters", "20", extra_env=env)
    assert run.returncode == 0, run.stderr
    assert '"ok": true' in run.stdout
    assert '"timed_loop": "mpi4py"' in run.stdout and "numba-mpi is not installed" in run.stdout
    probe = subprocess.run([sys.executable, "-c", "import gpucomm.payload.engine, gpucomm.main, reframe"],
                           env=dict(os.environ, **env), capture_output=True, text=True)
    assert "payload-only venv" in probe.stderr  # the blocker is active in that environment
