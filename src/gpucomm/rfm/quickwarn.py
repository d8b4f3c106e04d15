"""ReFrame's deprecation warning, skipped where it is being ignored anyway.

ReFrame's logger reads every loggable attribute of a check for each log record, inside
``suppress_deprecations()``; reading the deprecated ``variables`` (an alias of ``env_vars``)
calls ``reframe.core.warnings.user_deprecation_warning``, which walks ``inspect.stack()`` (source
files read for every frame) before ``warnings.warn`` drops the warning the filter ignores.  In a
dry run of every check on Alps that was 4158 stack walks, half the session's CPU time
(bench/results/2026-12-03-cpu-2core/44-reframe-deprecation-cost).  ``install`` wraps the function
where ReFrame's fields call it: when the warnings filters in force ignore ReFrame's deprecation
warnings it returns at once; otherwise ReFrame's own function runs, unchanged.
"""

from __future__ import annotations

import warnings
from typing import Any


def _ignored(category: type) -> bool:
    """Whether the warnings filters in force now ignore ``category`` whatever its message and
    place: the first filter of its category decides, as in ``warnings.warn``; one that also names
    a message, module or line (which only ReFrame's own walk can match) answers "not known": False."""
    for action, message, cat, module, lineno in warnings.filters:
        if issubclass(category, cat):
            return action == "ignore" and message is None and module is None and not lineno
    return False


def install() -> None:
    """Wrap ``user_deprecation_warning`` in ``reframe.core.fields`` (once; a no-op where ReFrame
    changed the names)."""
    try:
        from reframe.core import fields
        from reframe.core.warnings import ReframeDeprecationWarning
    except ImportError:
        return
    original = getattr(fields, "user_deprecation_warning", None)
    if original is None or getattr(original, "_gpucomm_quick", False):
        return

    def user_deprecation_warning(message: str, from_version: str = "0.0.0") -> Any:
        if _ignored(ReframeDeprecationWarning):
            return None
        return original(message, from_version)

    user_deprecation_warning._gpucomm_quick = True  # type: ignore[attr-defined]
    fields.user_deprecation_warning = user_deprecation_warning
