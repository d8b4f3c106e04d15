"""The payload's output is read in one place, ``gpucomm.contract`` (``parse_output``: terminal
control sequences dropped first, then the tagged lines).  No other module of ``src/gpucomm``
parses it itself.

"Parsing" here means using a payload tag (``contract.RESULT_TAG`` / ``DONE_TAG``, by name or as a
literal such as ``"GPUCOMM-RESULT "``) to recognise or cut a line: as the argument of a string
method that matches or splits (``line.startswith(RESULT_TAG + " ")``, ``text.split(DONE_TAG)``), of
``len()`` (``line[len(RESULT_TAG) + 1:]``) or of a ``re`` function, or on the left of ``in``.
Naming a tag in a message (``f"no {RESULT_TAG} lines"``) is not parsing."""

import ast
import json
from pathlib import Path

import pytest

from gpucomm import contract
from gpucomm.analysis import inputs

SRC = Path(__file__).resolve().parents[2] / "src" / "gpucomm"
CONTRACT = SRC / "contract.py"
TAG_NAMES = {"RESULT_TAG", "DONE_TAG"}
TAGS = (contract.RESULT_TAG, contract.DONE_TAG)
#: str methods that recognise or cut a line by their argument
MATCHING = {"startswith", "endswith", "find", "rfind", "index", "rindex", "count", "split", "rsplit",
            "partition", "rpartition", "removeprefix", "removesuffix", "lstrip", "rstrip", "strip", "replace"}


def _is_tag(node):
    """Whether an expression is, or builds, a payload tag."""
    if isinstance(node, ast.Name):
        return node.id in TAG_NAMES
    if isinstance(node, ast.Attribute):
        return node.attr in TAG_NAMES
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and any(tag in node.value for tag in TAGS)
    if isinstance(node, ast.BinOp):
        return _is_tag(node.left) or _is_tag(node.right)
    if isinstance(node, ast.JoinedStr):
        return any(_is_tag(v.value if isinstance(v, ast.FormattedValue) else v) for v in node.values)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_is_tag(e) for e in node.elts)
    return False


def payload_parsing(source):
    """[(line, what)] of every place ``source`` parses payload output by a tag."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            args = [*node.args, *(k.value for k in node.keywords)]
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in MATCHING and any(map(_is_tag, args)):
                hits.append((node.lineno, f".{func.attr}() by a payload tag"))
            elif isinstance(func, ast.Name) and func.id == "len" and any(map(_is_tag, args)):
                hits.append((node.lineno, "len() of a payload tag (cutting a tagged line)"))
            elif (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "re"
                  and any(map(_is_tag, args))):
                hits.append((node.lineno, f"re.{func.attr}() on a payload tag"))
        elif isinstance(node, ast.Compare) and _is_tag(node.left) and any(
                isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            hits.append((node.lineno, "a payload tag 'in' a line"))
    return sorted(set(hits))


def test_the_rule_catches_parsing_and_spares_messages():
    parsing = '''
for line in text.splitlines():
    if line.startswith(RESULT_TAG + " "):
        records.append(json.loads(line[len(RESULT_TAG) + 1:]))
    if line.startswith(("GPUCOMM-DONE ", "x")) or contract.DONE_TAG in line:
        pass
chunks = text.split(f"{DONE_TAG} ")
m = re.match(r"GPUCOMM-RESULT (.*)", line)
'''
    assert sorted({line for line, _ in payload_parsing(parsing)}) == [3, 4, 5, 7, 8]
    messages = '''
problem = f"{why}, and no {RESULT_TAG} lines here either: skipped"
raise SanityError("no GPUCOMM-DONE line")
"""Reads the GPUCOMM-RESULT lines."""
print(result_line(rec))
'''
    assert payload_parsing(messages) == []


#: modules that still split the payload's output by its tags themselves, and what contract.py
#: would need to offer them; strict: the test fails once one no longer does, so the entry goes
STILL_PARSING = {}


def _modules():
    for path in sorted(p for p in SRC.rglob("*.py") if p != CONTRACT):
        why = STILL_PARSING.get(str(path.relative_to(SRC)))
        yield pytest.param(path, id=str(path.relative_to(SRC.parent)),
                           marks=[pytest.mark.xfail(reason=why, strict=True)] if why else [])


def test_still_parsing_names_real_modules():
    assert all((SRC / name).is_file() for name in STILL_PARSING)


@pytest.mark.parametrize("path", list(_modules()))
def test_no_module_but_contract_parses_payload_output(path):
    """Every module outside contract.py reads the payload's lines through contract.parse_output
    (or read_run), never by its tags."""
    hits = payload_parsing(path.read_text())
    lines = path.read_text().splitlines()
    assert not hits, f"{path.relative_to(SRC.parent)} parses payload output itself (use contract.parse_output):\n" \
        + "\n".join(f"  line {n}: {what}: {lines[n - 1].strip()}" for n, what in hits)


def test_report_reads_stdout_through_the_contract(tmp_path):
    """rfm_job.out where the results file is missing: a line that another rank's reset sequence
    runs into still counts (contract.parse_output drops it), a line cut short loses only itself."""
    rec = {"op": "pingpong", "method": "host", "size": 8, "nranks": 2,
           "time_us": {"median": 2.0, "mean": 2.0, "min": 2.0, "max": 2.0, "p05": 1.9, "p95": 2.1},
           "goodput_GBps": 0.004}
    big = dict(rec, size=1 << 20, goodput_GBps=9.0)
    out = tmp_path / contract.STDOUT_FILE
    out.write_text("\n".join(["starting", contract.result_line(rec),
                              "\x1b[0m" + contract.result_line(big),
                              contract.result_line(dict(rec, size=64))[:40],
                              contract.done_line({"ok": True})]) + "\n")
    data = inputs.load([str(tmp_path)])
    sweeps, _, _ = data.frames()
    assert sorted(sweeps["size"]) == [8, 1 << 20]
    assert sweeps.set_index("size").loc[1 << 20, "goodput_GBps"] == 9.0
    assert any(f"used the 2 {contract.RESULT_TAG} lines" in p for p in data.problems)
    json.dumps(data.problems)  # plain strings
