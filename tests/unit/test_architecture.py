"""The map is true and stays true: every module under src/gpucomm/ is named in the tree of
docs/architecture.md, in its own folder (a package's __init__.py: named on its folder's line or
the lines that continue it); and checks/ import the ReFrame library from its face, gpucomm.rfm,
which exports what they use."""

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "gpucomm"
DOC = REPO / "docs" / "architecture.md"
FILE = re.compile(r"[\w]+\.py")


def mapped_modules(text):
    """The paths (relative to the repository) the first code block of ``text`` names: a line's
    leading ``NAME.py`` tokens, or a ``folder/``, under the nearest less indented folder; a
    line that starts with neither continues its folder's line (its ``__init__.py`` counted)."""
    block = text.split("```\n", 2)[1]
    stack, named, last_dir = [], set(), None
    for line in block.splitlines():
        tokens = line.split()
        if not tokens:
            continue
        indent = len(line) - len(line.lstrip())
        first = tokens[0]
        if first.endswith("/") or FILE.fullmatch(first):
            while stack and stack[-1][0] >= indent:
                stack.pop()
            parent = stack[-1][1] if stack else ""
        if first.endswith("/"):
            last_dir = parent + first
            stack.append((indent, last_dir))
            rest = tokens[1:]
        elif FILE.fullmatch(first):
            files = []
            for token in tokens:
                if not FILE.fullmatch(token):
                    break
                files.append(token)
            named.update(parent + f for f in files)
            rest = tokens[len(files):]
        else:
            rest = tokens
        if last_dir and any("__init__.py" in t for t in rest):
            named.add(last_dir + "__init__.py")
    return named


def test_every_module_is_on_the_map():
    named = mapped_modules(DOC.read_text())
    modules = sorted(str(p.relative_to(REPO)) for p in SRC.rglob("*.py"))
    missing = [m for m in modules if m not in named]
    assert not missing, "docs/architecture.md does not name: " + ", ".join(missing)
    stale = sorted(n for n in named if n.startswith("src/") and not (REPO / n).exists())
    assert not stale, "docs/architecture.md names modules that do not exist: " + ", ".join(stale)


def test_the_map_test_catches_a_missing_module():
    text = "```\nsrc/gpucomm/\n  a.py b.py   two\n  sub/   a package (__init__.py)\n    c.py\n```\n"
    assert mapped_modules(text) == {"src/gpucomm/a.py", "src/gpucomm/b.py", "src/gpucomm/sub/__init__.py",
                                    "src/gpucomm/sub/c.py"}
    assert "src/gpucomm/sub/d.py" not in mapped_modules(text)


def test_checks_import_the_rfm_library_from_its_face():
    import gpucomm.rfm
    past = []
    for path in sorted((REPO / "checks").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("gpucomm.rfm"):
                if node.module != "gpucomm.rfm":
                    past.append(f"{path.relative_to(REPO)}:{node.lineno} from {node.module}")
                past += [f"{path.relative_to(REPO)}:{node.lineno} {a.name} not exported"
                         for a in node.names if a.name not in gpucomm.rfm.__all__]
    assert not past, "\n".join(past)


#: the most tests/data may hold: small copies of what the tests read, never an archive
MAX_TEST_DATA_BYTES = 3 << 20


def names_committed_results(tree):
    """Whether a module's code (its docstrings and comments left out) names bench/results: a
    string holding it, or a path built as ``... / "bench" / "results"``."""
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}

    def const(node, value):
        return isinstance(node, ast.Constant) and node.value == value
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs \
                and "bench/results" in node.value:
            return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and const(node.right, "results") and (
                const(node.left, "bench") or isinstance(node.left, ast.BinOp) and const(node.left.right, "bench")):
            return True
    return False


def marks_committed(tree):
    return any(isinstance(n, ast.Attribute) and n.attr == "committed" and isinstance(n.value, ast.Attribute)
               and n.value.attr == "mark" for n in ast.walk(tree))


def test_tests_read_tests_data_not_dated_results():
    """A test reads its inputs from tests/data (or builds them), never from a dated bench/results
    folder, unless it is about the committed results themselves (marker ``committed``: outside
    the unit tier); tests/data stays small and each of its folders names its sources."""
    bad = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        if path == Path(__file__).resolve():  # the rule's own examples
            continue
        tree = ast.parse(path.read_text())
        if names_committed_results(tree) and not marks_committed(tree):
            bad.append(f"{path.relative_to(REPO)} reads bench/results and marks no test committed")
    data = REPO / "tests" / "data"
    size = sum(p.stat().st_size for p in data.rglob("*") if p.is_file())
    assert size <= MAX_TEST_DATA_BYTES, f"tests/data holds {size} bytes"
    bad += [f"{d.relative_to(REPO)} has no README.md" for d in sorted(data.iterdir())
            if d.is_dir() and not (d / "README.md").exists()]
    assert not bad, "\n".join(bad)


def test_the_results_rule_sees_a_path_to_bench_results():
    assert names_committed_results(ast.parse('P = REPO / "bench" / "results" / "x"'))
    assert names_committed_results(ast.parse('P = "bench/results/2026-11-30-nvidia-h200-x2"'))
    assert not names_committed_results(ast.parse('"""bench/results/x: where it came from"""\nx = doc["results"]'))
    assert marks_committed(ast.parse("pytestmark = pytest.mark.committed"))


#: the longest a function of src/ and checks/ may be (lines, its decorators left out)
MAX_FUNCTION_LINES = 50


def test_no_long_functions():
    long = []
    for path in sorted([*(REPO / "src").rglob("*.py"), *(REPO / "checks").rglob("*.py")]):
        rel = str(path.relative_to(REPO))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{rel}:{node.lineno} {node.name}: {lines} lines")
    assert not long, "\n".join(long)


def upward_imports(path):
    """The names ``path`` (a module of a package) imports from the __init__.py of its own package
    or of a package above it (``from . import NAME`` where NAME is no module): an arrow back up
    (gpucomm's ``__version__``, the distribution's, excepted)."""
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level and not node.module and path.name != "__init__.py":
            package = path.parent
            for _ in range(node.level - 1):
                package = package.parent
            out += [f"{path.relative_to(SRC)}: from {'.' * node.level} import {a.name}" for a in node.names
                    if not (package / f"{a.name}.py").exists() and not (package / a.name).is_dir()
                    and not (package == SRC and a.name == "__version__")]
    return out


def test_no_module_imports_from_its_packages_face():
    """A package's __init__.py may import its modules, never the reverse (docs/architecture.md)."""
    found = [line for path in sorted(SRC.rglob("*.py")) for line in upward_imports(path)]
    assert not found, "\n".join(found)


#: the most top-level scripts bench/ may hold: the tools a person runs (bench/README.md's table);
#: their helpers go into bench/lib/, studies of committed results into bench/studies/
MAX_BENCH_SCRIPTS = 6


def test_bench_top_level_is_the_tools_a_person_runs():
    scripts = sorted(p.name for p in (REPO / "bench").iterdir() if p.is_file() and p.name != "README.md")
    assert len(scripts) <= MAX_BENCH_SCRIPTS, scripts
    table = (REPO / "bench" / "README.md").read_text()
    assert all(f"| `{name}` |" in table for name in scripts), scripts
