"""The ``gpucomm`` command: payload operations go to the payload's command line; ``report`` and
``tolerances`` to the analysis layer; ``probe`` to the site layer.  Each is imported only when
called, so a payload-only install never imports ReFrame, pandas or matplotlib."""

import sys

from .contract import ERROR_PREFIX

#: subcommand -> ("module:function" taking the remaining arguments, the extra it needs)
TOOLS = {"report": ("gpucomm.analysis.report:main", "report"),
         "tolerances": ("gpucomm.analysis.tolerances:main", "report"),
         "acceptance": ("gpucomm.analysis.acceptance:main", "report"),
         "nightly": ("gpucomm.analysis.nightly:main", "report"),
         "probe": ("gpucomm.site.probe:main", None),
         "preflight": ("gpucomm.site.preflight:main", None)}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] and argv[0] in TOOLS:
        import importlib
        target, extra = TOOLS[argv[0]]
        module, func = target.split(":")
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            hint = f": install gpucomm[{extra}]" if extra else ""
            print(f"{ERROR_PREFIX} 'gpucomm {argv[0]}' needs {exc.name}{hint}", file=sys.stderr)
            return 2
        return getattr(mod, func)(argv[1:])
    from .payload.cli import main as payload_main
    return payload_main(argv)
