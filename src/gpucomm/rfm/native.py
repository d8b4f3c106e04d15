"""ReFrame base for the native tools (OSU, nccl-tests/rccl-tests).

It reuses the payload checks' base (tasks per node, GPU request, skips, site options,
references) and replaces the command, the sanity and the perf variables: the tool's stdout is
parsed into gpucomm records (kept as gpucomm_results.json, like the payload's), sanity requires
the tool's own validation to have passed and every size to be there, and the perf variables
have the payload's names (latency_8B, goodput_*, busbw_*).
"""

import json
import os

import reframe.utility.sanity as sn
from reframe.core.builtins import variable
from reframe.core.exceptions import ReframeError, SanityError

from ..contract import RESULTS_FILE, record_value
from ..errors import GpucommError
from ..native.tools import TOOL_DIRS, find_binary
from ..sizes import size_label
from .base import GpucommCheck

@sn.deferrable
def native_ok(check):
    meta, records = check.parsed()
    missing = [s for s in check.expected_sizes() if s not in records]
    if not records:
        raise SanityError(f"{check.benchmark}: no result rows in the output")
    if missing:
        raise SanityError(f"{check.benchmark}: sizes missing: {', '.join(size_label(s) for s in missing)}")
    bad = [s for s, r in records.items() if r.get("validated") is False]
    if bad:
        raise SanityError(f"{check.benchmark}: the tool's validation failed at "
                          f"{', '.join(size_label(s) for s in sorted(bad))}")
    check.tool_sanity(meta, records)
    return True


@sn.deferrable
def native_value(check, size, key):
    return record_value(check.parsed()[1][size], key)


class NativeCheck(GpucommCheck):
    """Base of the OSU and nccl-tests checks; subclasses set ``tool`` and build the command."""

    tool = variable(str)
    #: directory holding the tool's binaries ('' : GPUCOMM_<TOOL>_DIR, extras, then PATH)
    tool_dir = variable(str, value="")
    benchmark = variable(str, value="")
    #: the tools need no Python: no preflight of the payload's interpreter
    preflight = False

    def requirements(self):
        self.identify()
        return self.tool_requirements()

    def description(self):
        return f"{self.tool} {self.benchmark} ({self.method})"

    def more_tags(self):
        return {self.tool, self.op, self.method, "native"}

    def identify(self):
        """Set benchmark, op, method (and sizes) from the check's parameters."""
        raise NotImplementedError

    def tool_requirements(self):
        """(valid_systems, valid_prog_environs) of the tool."""
        raise NotImplementedError

    def check_variables(self):
        super().check_variables()
        if self.tool_dir and not os.path.isdir(self.tool_dir):
            raise ReframeError(f"-S tool_dir={self.tool_dir}: no such directory")

    def locate(self, name):
        env_var, key = TOOL_DIRS[self.tool]
        dirs = [self.tool_dir, os.environ.get(env_var), self.current_environ.extras.get(key),
                self.current_partition.extras.get(key)]
        return find_binary(name, dirs)

    def skip_reason(self):
        reason = super().skip_reason()
        if reason is None and self.locate(self.benchmark) is None:
            env_var, key = TOOL_DIRS[self.tool]
            reason = (f"{self.benchmark} not found: set {env_var}, the environment's "
                      f"extras['{key}'], -S tool_dir=..., or put it on PATH")
        return reason

    def command(self):
        return self.locate(self.benchmark), self.tool_options()

    def tool_options(self):
        raise NotImplementedError

    def expected_sizes(self):
        return self.size_list

    def parse(self, text):
        raise NotImplementedError

    def tool_sanity(self, meta, records):
        """Tool-specific checks on top of rows and validation (raise SanityError)."""

    def parsed(self):
        if getattr(self, "_parsed", None) is None:
            path = os.path.join(self.stagedir, str(self.stdout))
            try:
                with open(path) as fp:
                    meta, recs = self.parse(fp.read())
            except (OSError, GpucommError) as exc:
                raise SanityError(f"{self.benchmark}: {exc}") from None
            self._parsed = (meta, {r["size"]: r for r in recs})
            # the check's label (osu-host, osu, osu-xccl, nccl-tests, nccl-tests-g), on every
            # record too: gpucomm report pairs tool and payload rows by it (report/tables.py)
            label = self.method_label()
            with open(os.path.join(self.stagedir, RESULTS_FILE), "w") as fp:
                meta = dict(meta, op=self.op, method=label, nranks=self.num_tasks)
                json.dump({"meta": meta, "results": [dict(r, op=self.op, method=label) for r in recs]},
                          fp, indent=1)
        return self._parsed

    def method_label(self):
        return self.tool

    def sanity_ok(self):
        return native_ok(self)

    def perf_functions(self):
        swept = set(self.expected_sizes())
        return {
            name: sn.make_performance_function(native_value(self, size, key), unit)
            for name, (size, key, unit) in self.perf_points.items() if size in swept
        }
