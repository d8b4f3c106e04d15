"""``gpucomm nightly``: the one entry point for cron: ReFrame, then the report, and the report's
verdict as the exit code (docs/nightly.md).

    gpucomm nightly [--mode health] [--out DIR] [REFRAME ARGS...]

Runs ``reframe -c checks/ --mode MODE -r --report-file DIR/report.json REFRAME ARGS`` (the
repository's checks/ and config/settings.py where -c, -C and RFM_CONFIG_FILES are not given),
then ``gpucomm report DIR/report.json -o DIR/report --history EARLIER`` (the other nights' folders
next to DIR: the nightly drift verdict, analysis/drift.py).  Exit status (gpucomm.constants): 0 PASS;
6 FAIL (a test case failed, a variable slower than the node's own history, or ReFrame ended
without a report: killed, crashed); 7 NOTHING RAN
(no test case selected, every one skipped, e.g. ``-n NoSuchCheck`` or ``--mode noise`` off a
cluster); 2 bad options or a report file that cannot be written; ReFrame's own exit code 2 where
it refused its command line.
"""

import argparse
import os
import subprocess
import sys
import time

from ..constants import EXIT_BAD_INPUT, EXIT_OK, EXIT_REPORT_FAIL, EXIT_REPORT_NOTHING_RAN

PREFIX = "gpucomm nightly"


def _say(msg):
    print(f"{PREFIX}: {msg}", file=sys.stderr, flush=True)


def _repo_path(*parts):
    """A path of the repository in the current folder or above it (checks/, config/settings.py)."""
    here = os.getcwd()
    while True:
        path = os.path.join(here, *parts)
        if os.path.exists(path):
            return path
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def build_parser():
    p = argparse.ArgumentParser(prog=PREFIX, description=__doc__.splitlines()[0],
                                epilog="Every other argument goes to reframe.")
    p.add_argument("--mode", default="health", help="ReFrame's --mode (default: health)")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="folder of the night: report.json (ReFrame's) and report/ (gpucomm report's); "
                        "default nightly/<UTC time>-<pid>")
    p.add_argument("--history", nargs="+", default=None, metavar="PATH",
                   help="earlier nights the drift verdict judges this night against (default: the other "
                        "folders next to --out's that hold a report.json; 'none': no history)")
    p.add_argument("--since", default=None, metavar="DATE",
                   help="only nights from DATE on make a node's history (after a repair or an update)")
    return p


def reframe_command(mode, report_file, extra):
    from .report.inputs import reframe_argv
    cmd = reframe_argv()
    if "-C" not in extra and "--config-file" not in extra and not os.environ.get("RFM_CONFIG_FILES"):
        config = _repo_path("config", "settings.py")
        cmd += ["-C", config] if config else []
    if "-c" not in extra and "--checkpath" not in extra:
        checks = _repo_path("checks")
        cmd += ["-c", checks] if checks else []
    return cmd + ["--mode", mode, "-r", "--report-file", report_file] + list(extra)


def writable_folder(path):
    """Why a file cannot be created at ``path``, or None."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return f"{folder} is no folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"{folder} is not writable"
    return None


def main(argv=None):
    args, extra = build_parser().parse_known_args(sys.argv[1:] if argv is None else list(argv))
    if any(a == "--report-file" or a.startswith("--report-file=") for a in extra):
        _say("error: the report file is DIR/report.json (--out DIR), not --report-file")
        return EXIT_BAD_INPUT
    from .drift import parse_options
    try:
        parse_options(args.since, None)
    except ValueError as exc:
        _say(f"error: {exc}")
        return EXIT_BAD_INPUT
    out = args.out or os.path.join("nightly", time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + f"-{os.getpid()}")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        _say(f"error: cannot make {out}: {exc.strerror}")
        return EXIT_BAD_INPUT
    report_file = os.path.join(out, "report.json")
    why = writable_folder(report_file)
    if why:
        _say(f"error: the report file {report_file} cannot be written: {why}")
        return EXIT_BAD_INPUT
    if os.path.exists(report_file):
        _say(f"error: {report_file} exists (an earlier night's): give a new --out")
        return EXIT_BAD_INPUT
    cmd = reframe_command(args.mode, report_file, extra)
    rc = subprocess.call(cmd)
    if rc == EXIT_BAD_INPUT and not os.path.exists(report_file):
        _say(f"FAIL: reframe refused its command line (exit {rc})")
        return EXIT_BAD_INPUT
    if not os.path.exists(report_file) or os.path.getsize(report_file) == 0:
        if rc == 0:
            _say(f"NOTHING RAN: reframe wrote no report to {report_file} (no test case selected, "
                 "or the report could not be written)")
            return EXIT_REPORT_NOTHING_RAN
        _say(f"FAIL: reframe ended with exit {rc} and wrote no report to {report_file} "
             "(killed, crashed, or the folder is full)")
        return EXIT_REPORT_FAIL
    from .drift import nightly_history
    from .report import main as report_main
    history = nightly_history(out, args.history)
    code = report_main([report_file, "-o", os.path.join(out, "report"), "-q", "--paper", "none"]
                       + (["--history", *history] if history else [])
                       + (["--since", args.since] if args.since else []))
    if code == EXIT_OK and rc != 0:
        _say(f"FAIL: the report passed but reframe ended with exit {rc}")
        return EXIT_REPORT_FAIL
    return code


if __name__ == "__main__":
    sys.exit(main())
