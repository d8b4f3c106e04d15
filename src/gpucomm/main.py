"""The ``gpucomm`` command: payload operations go to the payload's command line; ``report`` and
``tolerances`` to the analysis layer; ``probe`` to the site layer.  Each is imported only when
called, so a payload-only install never imports ReFrame, pandas or matplotlib."""

import os
import sys

from .contract import ERROR_PREFIX

#: environment set (where unset) before a compute-node command imports numpy: the payload, probe
#: and preflight do no linear algebra, and OpenBLAS (numpy's wheels) otherwise starts a thread per
#: core at import, e.g. 72 idle threads per rank on a Grace node beside the timed loop; on the CI
#: machine a 2-rank launch took 0.740 CPU seconds with them, 0.615 without (medians of 8)
#: (bench/results/2026-12-03-cpu-2core/44-ci-timings/openblas-threads.log)
NODE_ENV = {"OPENBLAS_NUM_THREADS": "1"}

#: subcommand -> ("module:function" taking the remaining arguments, the extra it needs, what it does)
TOOLS = {"report": ("gpucomm.analysis.report:main", "report", "tables, plots and the verdict of ReFrame results"),
         "tolerances": ("gpucomm.analysis.tolerances:main", "report", "references proposed from healthy runs"),
         "acceptance": ("gpucomm.analysis.acceptance:main", "report",
                        "new nodes judged against the fleet: a drain list and scontrol lines"),
         "nightly": ("gpucomm.analysis.nightly:main", "report",
                     "the cron entry point: ReFrame, the report, its verdict as the exit code"),
         "probe": ("gpucomm.site.probe:main", None, "what this node offers, as JSON"),
         "preflight": ("gpucomm.site.preflight:main", None,
                       "before a job's launch: can its interpreter run the payload")}


def other_commands():
    """The payload help's closing lines: every command of TOOLS."""
    width = max(map(len, TOOLS))
    lines = [f"  {name:<{width}}  {what}" + (f" (needs gpucomm[{extra}])" if extra else "")
             for name, (_, extra, what) in TOOLS.items()]
    return "other commands (gpucomm COMMAND --help):\n" + "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not (argv[:1] and argv[0] in TOOLS and TOOLS[argv[0]][1]):  # not an analysis command
        for key, value in NODE_ENV.items():
            os.environ.setdefault(key, value)
    if argv[:1] and argv[0] in TOOLS:
        import importlib
        target, extra, _ = TOOLS[argv[0]]
        module, func = target.split(":")
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            hint = f": install gpucomm[{extra}]" if extra else ""
            print(f"{ERROR_PREFIX} 'gpucomm {argv[0]}' needs {exc.name}{hint}", file=sys.stderr)
            return 2
        return getattr(mod, func)(argv[1:])
    from .payload.cli import _early_error, main as payload_main
    from .payload.ops import REGISTRY as OPS
    if argv[:1] and not argv[0].startswith("-") and argv[0] not in OPS:  # old: the operations only
        return _early_error(f"invalid choice: {argv[0]!r}: choose an operation ({', '.join(OPS)}) or "
                            f"{', '.join(TOOLS)} (see gpucomm --help)")
    return payload_main(argv, epilog=other_commands())
