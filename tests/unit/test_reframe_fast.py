"""tests/reframe_fast.py: the tests' ReFrame warns exactly where ReFrame's own stack walk does."""

import warnings

import reframe_fast


def _warn_here(fn):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fn("a deprecated thing")  # the frame the warning must name: this line
    return [(w.filename, w.lineno, str(w.message)) for w in seen]


def test_the_fast_walk_names_the_same_frame(monkeypatch):
    import reframe.core.warnings as rw
    before = _warn_here(rw.user_deprecation_warning)
    monkeypatch.setattr(rw, "inspect", rw.inspect)  # undone after the test
    reframe_fast.install()
    assert rw.inspect is reframe_fast._Frames
    after = _warn_here(rw.user_deprecation_warning)
    assert before == after and before and before[0][0] == __file__


def test_the_reference_files_parse_the_same(monkeypatch):
    import reframe.core.pipeline as pipeline
    import yaml

    from reframe_helpers import REPO
    monkeypatch.setattr(pipeline, "yaml", pipeline.yaml)
    reframe_fast.install()
    assert pipeline.yaml is not yaml
    for path in sorted((REPO / "config" / "references").glob("*.yaml")):
        with open(path) as a, open(path) as b:
            assert pipeline.yaml.safe_load(a) == yaml.safe_load(b), path.name


def test_a_record_no_handler_takes_is_not_filled(monkeypatch):
    """The logger skips a record below every handler's level before it fills the check's
    variables into it; a record a handler takes is logged as before."""
    import logging

    import reframe.core.logging as rlog
    monkeypatch.setattr(rlog.LoggerAdapter, "log", rlog.LoggerAdapter.log)
    monkeypatch.setattr(rlog, "configure_logging", rlog.configure_logging)
    reframe_fast.install()
    logger = rlog.Logger("gpucomm-test")
    seen = []
    handler = logging.Handler()
    handler.emit = seen.append
    handler.setLevel(logging.INFO)
    logger.addHandler(handler)
    adapter = rlog.LoggerAdapter(logger)
    filled = []
    monkeypatch.setattr(adapter, "_update_check_extras", lambda: filled.append(1))
    adapter.debug("not taken")
    assert not filled and not seen
    adapter.info("taken")
    assert filled and [r.getMessage() for r in seen] == ["taken"]
