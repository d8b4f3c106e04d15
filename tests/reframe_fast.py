"""The tests' ReFrame, with a stack walk and a YAML parse made cheap (reframe_helpers._MAIN
installs them: the tests dry-run ReFrame about a hundred times).

ReFrame 4.10's ``user_deprecation_warning`` (reframe/core/warnings.py) finds the first frame
outside ReFrame with ``inspect.stack()``, which reads every frame's source context and looks up
every frame's module by file.  Its logger calls it on every log record of a check, because the
deprecated ``variables`` alias of ``env_vars`` is loggable (reframe/core/fields.py,
logging.py's ``_update_check_extras``): a dry run of the paper mode spends half of its time
there.  ``install`` gives that one function a frame walk with the same answer (the frames from
the caller outwards, each frame's module by its globals' ``__name__``); what it warns, and
where, is unchanged.  It does nothing when ReFrame's function no longer looks like that.

ReFrame reads a check's ``$ref`` file (pipeline.py's ``_read_ref_file``) with ``yaml.safe_load``,
PyPI's pure-Python parser, once per test case; ``install`` gives it libyaml's parser with the
same safe constructor (where PyYAML was built with libyaml).

ReFrame's logger fills every check variable into every record before its handlers filter it by
level (logging.py's ``LoggerAdapter.process``), and its built-in file handler keeps every debug
record in a temporary ``rfm-*.log`` that no test reads: in a dry run of the paper mode, 2600 of
its 3200 records, two thirds of the run's time.  ``install`` leaves that file the records of the
info level and above (what ReFrame prints without -v) and drops a record that no handler would
take before it is filled; the output, the perflogs and the reports are unchanged."""

import logging
import sys
import types


class _Frames:
    """The two ``inspect`` functions ``user_deprecation_warning`` calls, without source reads."""

    @staticmethod
    def stack():
        frame, records = sys._getframe(1), []
        while frame is not None:
            records.append(types.SimpleNamespace(frame=frame))
            frame = frame.f_back
        return records

    @staticmethod
    def getmodule(frame):
        return sys.modules.get(frame.f_globals.get("__name__"))


def _safe_load_c(stream):
    import yaml
    return yaml.load(stream, Loader=yaml.CSafeLoader)


def _log_if_taken(log):
    """LoggerAdapter.log, returning at once for a record below every handler's level."""
    def taken_log(self, level, msg, *args, **kwargs):
        handlers = self.logger.handlers if self.logger else ()
        if handlers and level < min(h.level for h in handlers):
            return
        log(self, level, msg, *args, **kwargs)
    return taken_log


def _debug_file_at_info(configure):
    """configure_logging, then ReFrame's own log files at the info level at least."""
    def configure_logging(*args, **kwargs):
        configure(*args, **kwargs)
        import reframe.core.logging as rlog
        for handler in getattr(rlog._logger, "handlers", ()):
            if isinstance(handler, logging.FileHandler) and handler.level < logging.INFO:
                handler.setLevel(logging.INFO)
    return configure_logging


def install():
    import reframe.core.logging as rlog
    import reframe.core.pipeline as pipeline
    import reframe.core.warnings as warnings
    import yaml
    if not getattr(rlog.LoggerAdapter.log, "_gpucomm_fast", False):
        rlog.LoggerAdapter.log = _log_if_taken(rlog.LoggerAdapter.log)
        rlog.LoggerAdapter.log._gpucomm_fast = True
        rlog.configure_logging = _debug_file_at_info(rlog.configure_logging)
    code = warnings.user_deprecation_warning.__code__
    if {"inspect", "stack", "getmodule"} <= set(code.co_names):
        warnings.inspect = _Frames
    if getattr(yaml, "__with_libyaml__", False) and getattr(pipeline, "yaml", None) is yaml:
        pipeline.yaml = types.SimpleNamespace(safe_load=_safe_load_c)
