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


def test_fixtures_once():
    """tests/data holds only what bench/results does not: a committed result is read where it
    is committed (its MANIFEST beside it), never copied byte for byte into tests/data."""
    import hashlib

    def digests(root):
        return {hashlib.sha256(p.read_bytes()).hexdigest(): p for p in sorted(root.rglob("*")) if p.is_file()}
    committed = digests(REPO / "bench" / "results")
    copies = [f"{p.relative_to(REPO)} = {committed[h].relative_to(REPO)}"
              for h, p in digests(REPO / "tests" / "data").items() if h in committed]
    assert not copies, "byte-identical copies of committed results:\n" + "\n".join(copies)


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
