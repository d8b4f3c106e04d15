"""What ``-S VAR=VALUE`` may set, checked where ReFrame does not.

ReFrame converts a ``-S`` value through the variable's type and, where that fails (``-S
iters=abc``, ``-S emulate_nodes=maybe``), stops the session with a Python traceback; a name no
test has (``-S sizez=8``, a typo) is only a warning, and the run goes on with the default.  Here:

* ``integer(name)``, ``real(name)``, ``boolean(name)``: variable types whose conversion from a
  ``-S`` string (typecheck.ConvertibleType's ``__rfm_cast_str__``) fails in one line naming the
  variable and what it takes, ending ReFrame with exit 2 (constants.EXIT_BAD_INPUT);
* ``unknown_names()``: the ``-S`` names of ReFrame's command line that no loaded test has as a
  variable, and ``unknown_checks()``: the ``-S CHECK.VAR`` whose CHECK is no loaded test; a
  check fails at setup naming them (GpucommCheck.check_variables).
"""

import argparse
import os
import shlex
import sys

import reframe.utility.typecheck as typ
from reframe.core.exceptions import ReframeError

from ..constants import EXIT_BAD_INPUT

_TRUE, _FALSE = ("true", "yes", "y", "1"), ("false", "no", "n", "0")


def _typed(base, name, parse, takes):
    kind = typ.make_meta_type(f"{base.__name__}_{name}", base)

    def cast(cls, text):
        try:
            return parse(text)
        except ValueError:
            # ReFrame's loader skips a test file on a soft error (0 checks, exit 0) and prints a
            # traceback for any other: the session ends here, one line and exit 2
            print(f"gpucomm: error: -S {name}={text!r}: {name} takes {takes}", file=sys.stderr)
            raise SystemExit(EXIT_BAD_INPUT) from None
    kind.__rfm_cast_str__ = classmethod(cast)
    return kind


def _bool(text):
    if text.lower() in _TRUE:
        return True
    if text.lower() in _FALSE:
        return False
    raise ValueError(text)


def integer(name):
    """The type of an int variable ``name`` set with -S."""
    return _typed(int, name, int, "an integer")


def real(name):
    """The type of a float variable ``name`` set with -S."""
    return _typed(float, name, float, "a number")


def boolean(name):
    """The type of a bool variable ``name`` set with -S (ReFrame's typ.Bool spellings)."""
    return _typed(bool, name, _bool, f"{'/'.join(_TRUE)} or {'/'.join(_FALSE)}")


def command_line_values(argv=None):
    """[(test or None, variable, value)] of every -S/--setvar on ReFrame's command line."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("-S", "--setvar", action="append", dest="vars", default=[])
    known, _ = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    out = []
    for item in known.vars:
        name, _, value = item.partition("=")
        test, _, var = name.rpartition(".")
        out.append((test or None, var, value))
    return out


def check_reframe_values(argv=None):
    """ReFrame's own variables given with -S (``-S time_limit=abc``, ``-S num_tasks=x``): a value
    their type cannot take ends the session in one line and exit 2, where ReFrame would print a
    traceback (reframe/core/decorators.py's _setvars); called as gpucomm.rfm is imported, when
    the check files load, before ReFrame sets the values.  Only inside reframe (its argv)."""
    argv = sys.argv if argv is None else argv
    if not argv or os.path.basename(argv[0]) != "reframe":
        return
    from reframe.core.fields import make_convertible
    from reframe.core.pipeline import RegressionTest
    own = RegressionTest._rfm_var_space
    for test, var, value in command_line_values(argv[1:]):
        if var not in own or value == "@none":
            continue
        try:
            own[var]._p_field.__set__(None, make_convertible(value))
        except (TypeError, ValueError) as exc:
            name = f"{test}.{var}" if test else var
            print(f"gpucomm: error: -S {name}={value!r}: {exc}", file=sys.stderr)
            raise SystemExit(EXIT_BAD_INPUT) from None


def command_line_names(argv=None):
    """[(test or None, variable)] of every -S/--setvar on ReFrame's command line."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("-S", "--setvar", action="append", dest="vars", default=[])
    known, _ = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    names = []
    for item in known.vars:
        name = item.split("=", 1)[0]
        test, _, var = name.rpartition(".")
        names.append((test or None, var))
    return names


def _test_classes():
    from reframe.core.pipeline import RegressionTest
    seen, todo = {}, [RegressionTest]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub.__name__ not in seen:
                seen[sub.__name__] = sub
                todo.append(sub)
    return seen


def unknown_names(argv=None):
    """The -S names (as given) that no loaded test class has as a variable: a typo ReFrame
    only warns about.  ``TEST.VAR`` is checked against TEST (a check or fixture class loaded)."""
    classes = _test_classes()
    unknown = []
    for test, var in command_line_names(argv):
        if test is not None:
            if test in classes and var not in classes[test]._rfm_var_space:
                unknown.append(f"{test}.{var}")
        elif not any(var in cls._rfm_var_space for cls in classes.values()):
            unknown.append(var)
    return unknown


def unknown_checks(argv=None):
    """['-S TEST.VAR: why'] of the -S names whose TEST is no loaded check (`-S
    PingpongCheck.iters=5`: ReFrame says nothing and runs the default 1,000 iterations), with
    the nearest check's name where one is near."""
    import difflib
    classes = _test_classes()
    out = []
    for test, var in command_line_names(argv):
        if test is not None and test not in classes:
            near = difflib.get_close_matches(test, classes, n=1)
            out.append(f"-S {test}.{var}: no check of this run is called {test}"
                       + (f" ({near[0]}?)" if near else ""))
    return out


def check_names(argv=None):
    """Raise ReframeError naming every unknown -S name (see unknown_names, unknown_checks)."""
    unknown, checks = unknown_names(argv), unknown_checks(argv)
    if checks:
        raise ReframeError("; ".join(checks) + ": ReFrame ignores it without a word and runs the default")
    if unknown:
        raise ReframeError(f"-S {', '.join(unknown)}: no check has such a variable (a typo? "
                           "ReFrame only warns and runs the default)")


def quoted(value):
    """A -S string as one word of the job script (a space in '-S sizes=8, 1K')."""
    return shlex.quote(str(value))
