"""ReFrame base for the native tools (OSU, nccl-tests/rccl-tests).

It reuses the payload checks' base (tasks per node, GPU request, skips, site options,
references) and replaces the command, the sanity and the perf variables: the tool's stdout is
parsed into gpucomm records (kept as gpucomm_results.json, like the payload's), sanity requires
the tool's own validation to have passed and every size to be there, and the perf variables
have the payload's names (latency_8B, goodput_*, busbw_*).
"""

import json
import os
import shutil

import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, sanity_function, variable
from reframe.core.exceptions import SanityError

from ..errors import GpucommError
from ..rfm import RESULTS_FILE, GpucommCheck
from ..sizes import size_label

#: where a tool's binaries are looked for: env var, environment/partition extras key
TOOL_DIRS = {"osu": ("GPUCOMM_OSU_DIR", "osu_dir"), "nccl-tests": ("GPUCOMM_NCCL_TESTS_DIR", "nccl_tests_dir")}


def find_binary(name, dirs, max_depth=6):
    """The first executable ``name`` under one of ``dirs`` (searched a few levels deep), else on PATH."""
    for top in filter(None, dirs):
        top = os.path.expanduser(top)
        if os.path.isfile(os.path.join(top, name)) and os.access(os.path.join(top, name), os.X_OK):
            return os.path.join(top, name)
        base = top.rstrip(os.sep).count(os.sep)
        for root, subdirs, files in os.walk(top):
            if name in files and os.access(os.path.join(root, name), os.X_OK):
                return os.path.join(root, name)
            if root.count(os.sep) - base >= max_depth:
                subdirs[:] = []
    return shutil.which(name)


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
    rec = check.parsed()[1][size]
    return rec["time_us"]["median"] if key == "latency" else rec[key]


class NativeCheck(GpucommCheck):
    """Base of the OSU and nccl-tests checks; subclasses set ``tool`` and build the command."""

    tool = variable(str)
    #: directory holding the tool's binaries ('' : GPUCOMM_<TOOL>_DIR, extras, then PATH)
    tool_dir = variable(str, value="")
    benchmark = variable(str, value="")

    @run_after("init")
    def set_requirements(self):
        self.identify()
        systems, environs = self.requirements()
        self.valid_systems, self.valid_prog_environs = systems, environs
        self.descr = f"{self.tool} {self.benchmark} ({self.method})"
        self.tags |= {self.tool, self.op, self.method, "native"}
        self.keep_files = [RESULTS_FILE]

    def identify(self):
        """Set benchmark, op, method (and sizes) from the check's parameters."""
        raise NotImplementedError

    def requirements(self):
        raise NotImplementedError

    def locate(self, name):
        env_var, key = TOOL_DIRS[self.tool]
        dirs = [self.tool_dir, os.environ.get(env_var), self.current_environ.extras.get(key),
                self.current_partition.extras.get(key)]
        return find_binary(name, dirs)

    @run_after("setup")
    def set_command(self):
        exe = self.locate(self.benchmark)
        env_var, key = TOOL_DIRS[self.tool]
        self.skip_if(exe is None, f"{self.benchmark} not found: set {env_var}, the environment's "
                                  f"extras['{key}'], -S tool_dir=..., or put it on PATH")
        self.executable = exe
        self.executable_opts = self.tool_options()

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

    @sanity_function
    def validate(self):
        return native_ok(self)

    @run_before("performance")
    def set_perf_variables(self):
        swept = set(self.expected_sizes())
        self.perf_variables = {
            name: sn.make_performance_function(native_value(self, size, key), unit)
            for name, (size, key, unit) in self.perf_points.items() if size in swept
        }
