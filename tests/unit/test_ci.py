"""The CI script against the README and the suite's own rules: CI runs the README's test
command, the skip allow-list judges skips, the machine lock lets one measurement run alone."""

import re
import threading
import time

import machine
import skips
from reframe_helpers import REPO


def _ci_var(name):
    m = re.search(rf'^{name}="(.*)"$', (REPO / ".ci" / "run").read_text(), re.M)
    assert m, f".ci/run has no {name}=..."
    return m.group(1)


def test_ci_runs_the_readmes_test_command():
    install, tests = _ci_var("INSTALL"), _ci_var("TESTS")
    assert f"{install} && {tests}" in (REPO / "README.md").read_text()
    script = (REPO / ".ci" / "run").read_text()
    assert 'eval "$INSTALL"' in script and 'eval "$TESTS"' in script


#: the README's most lines: its two commands first, then the uses and where to read on
README_MAX_LINES = 110


def test_the_readme_is_short_with_its_two_commands_first_and_every_doc_in_read_on():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= README_MAX_LINES
    first, second = re.findall(r"```sh\n(.*?)```", text, re.S)[:2]
    assert "pip install" in first and "reframe -c checks/ -r" in first  # set up and run the main job
    assert f'{_ci_var("INSTALL")} && {_ci_var("TESTS")}' in second  # set up and run the tests
    read_on = text[text.index("## Read on"):]
    read_on = read_on[:read_on.find("\n## ", 1)]
    linked = set(re.findall(r"\]\((docs/[^)#]+\.md)", read_on))
    docs = {str(p.relative_to(REPO)) for p in (REPO / "docs").rglob("*.md")}
    assert docs <= linked, f"docs not in the README's Read on: {sorted(docs - linked)}"


def test_skips_outside_the_allow_list_are_named():
    found = [("a::t1", "Skipped: needs headless Chromium"), ("b::t2", "Skipped: cupy is installed here")]
    assert skips.unexpected(found, None) is None  # no allow-list: nothing judged
    assert skips.unexpected(found, "cupy is installed here\n\n") == [found[0]]
    assert skips.unexpected(found, "") == found
    assert skips.unexpected([], "x") == []


def test_a_measurement_waits_for_the_shared_tests_and_holds_off_new_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(machine, "TURNSTILE", str(tmp_path / "t.lock"))
    monkeypatch.setattr(machine, "MACHINE", str(tmp_path / "m.lock"))
    events = []

    def shared(name, hold):
        with machine.shared():
            events.append(f"{name}+")
            time.sleep(hold)
            events.append(f"{name}-")

    def alone():
        with machine.alone():
            events.append("alone+")
            time.sleep(0.2)
            events.append("alone-")

    first = threading.Thread(target=shared, args=("s1", 0.4))
    first.start()
    time.sleep(0.1)
    measure = threading.Thread(target=alone)
    measure.start()
    time.sleep(0.1)
    late = threading.Thread(target=shared, args=("s2", 0.0))  # arrives while the measurement waits
    late.start()
    for t in (first, measure, late):
        t.join(5)
    assert events == ["s1+", "s1-", "alone+", "alone-", "s2+", "s2-"], events


def test_no_two_test_files_share_a_name():
    """tests/ has no __init__.py files: two test modules of one basename collide at collection
    ("import file mismatch") and neither runs."""
    from collections import Counter
    names = Counter(p.name for p in (REPO / "tests").rglob("test_*.py"))
    assert [n for n, c in names.items() if c > 1] == []


def test_units_are_handed_out_long_first():
    """The cluster chain, then units with a measurement, then modules that share a set-up
    (one long unit each), then the tests that are a unit alone: old, collection order handed
    tests/unit/test_report.py (61-72 s, then one unit) out last, alone at the end of the run."""
    import types

    import conftest

    def item(nodeid, alone=False):
        marker = object() if alone else None
        return types.SimpleNamespace(nodeid=nodeid, get_closest_marker=lambda name, m=marker: m)

    items = [item("tests/unit/test_ci.py::test_a"),                       # a unit alone
             item("tests/unit/test_report_reframe.py::test_b"),           # module with a set-up
             item("tests/payload/test_measures.py::test_c", alone=True),  # a measurement
             item("tests/slurm/test_cluster.py::test_d")]
    order = [it.nodeid.split("::")[1] for it in conftest.in_handing_order(items)]
    assert order == ["test_d", "test_c", "test_b", "test_a"], order
