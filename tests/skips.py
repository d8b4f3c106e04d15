"""CI's rule for skipped tests: every test runs in CI, so a skip is a failure unless its reason
matches a line of the allow-list that .ci/run passes in GPUCOMM_CI_ALLOWED_SKIPS (regular
expressions, one per line).  tests/conftest.py applies it at the end of the session."""

import re

ALLOWED_SKIPS_ENV = "GPUCOMM_CI_ALLOWED_SKIPS"


def unexpected(skips, allowed):
    """The (test, reason) pairs of ``skips`` whose reason no line of ``allowed`` matches; None
    where there is no allow-list (outside CI: skips are only reported)."""
    if allowed is None:
        return None
    patterns = [re.compile(line.strip()) for line in allowed.splitlines() if line.strip()]
    return [(test, reason) for test, reason in skips if not any(p.search(reason) for p in patterns)]
