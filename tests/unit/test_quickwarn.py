"""gpucomm.rfm.quickwarn: ReFrame's deprecation warnings skipped only where they are ignored."""

import warnings

import pytest

pytest.importorskip("reframe")

from reframe.core import fields  # noqa: E402
from reframe.core.warnings import ReframeDeprecationWarning, suppress_deprecations  # noqa: E402

import gpucomm.rfm  # noqa: E402,F401  (installs it)
from gpucomm.rfm import quickwarn  # noqa: E402


def test_ignored_deprecations_skip_the_stack_walk_and_the_others_still_warn(monkeypatch):
    wrapped = fields.user_deprecation_warning
    assert getattr(wrapped, "_gpucomm_quick", False)
    quickwarn.install()  # twice: still one wrapper
    assert fields.user_deprecation_warning is wrapped
    calls = []
    monkeypatch.setattr("inspect.stack", lambda *a, **k: calls.append(1) or [])
    with suppress_deprecations():
        wrapped("old name", "0.0.0")
    assert calls == []  # ignored: no stack walk
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", ReframeDeprecationWarning)
        wrapped("old name", "0.0.0")
    assert calls and [str(w.message) for w in seen] == ["old name"]  # ReFrame's own function ran
    calls.clear()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("ignore", ReframeDeprecationWarning)
        warnings.filterwarnings("always", "old", ReframeDeprecationWarning)  # a filter only ReFrame can match
        wrapped("old name", "0.0.0")
    assert calls and [str(w.message) for w in seen] == ["old name"]
