"""The payload's fault-injection hooks as a check sees them: a hook set in ReFrame's environment
(the jobs inherit it) where it cannot fire, or whose effect nothing can judge, fails the check
naming it, so "TEST HOOK ACTIVE" never ends in a PASS that tested nothing."""

import os

from ..constants import TEST_HOOK_SCOPE, TEST_HOOKS_PERF_ONLY


def active(env=None):
    """{hook: value} of every GPUCOMM_TEST_* hook set (non-empty) in ``env`` (os.environ)."""
    env = os.environ if env is None else env
    return {hook: env[hook] for hook in TEST_HOOK_SCOPE if env.get(hook)}


def cannot_fire(hooks, methods, op):
    """The hooks of ``hooks`` that none of ``methods`` running ``op`` can fire, with where they can."""
    said = []
    for hook in hooks:
        where_methods, where_ops = TEST_HOOK_SCOPE[hook]
        if (where_ops is not None and op not in where_ops) or (
                where_methods is not None and not set(methods) & set(where_methods)):
            places = [", ".join(where_ops) if where_ops else "", ", ".join(where_methods or ())]
            said.append(f"{hook} fires only in {' with '.join(p for p in places if p)}")
    return said


def hook_error(methods, op, missing_reference, env=None):
    """Why this check may not run under the hooks set, or None: a hook that cannot fire in it,
    or a hook that only changes the numbers where no reference judges them
    (``missing_reference()``: '' or what is missing)."""
    hooks = active(env)
    misplaced = cannot_fire(hooks, methods, op)
    if misplaced:
        return (f"TEST HOOK ACTIVE but cannot fire in {op} with {', '.join(methods)}: "
                + "; ".join(misplaced))
    perf_only = [h for h in hooks if h in TEST_HOOKS_PERF_ONLY]
    missing = missing_reference() if perf_only else ""
    if missing:
        return f"TEST HOOK ACTIVE ({', '.join(perf_only)}) but nothing can fail: {missing}"
    return None
