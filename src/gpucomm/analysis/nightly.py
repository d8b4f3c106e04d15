"""``gpucomm nightly``: the one entry point for cron: ReFrame, then the report, and the report's
verdict as the exit code (docs/nightly.md).

    gpucomm nightly [--mode health] [--out DIR] [REFRAME ARGS...]

Runs ``reframe -c checks/ --mode MODE -r --report-file DIR/report.json REFRAME ARGS`` (the
repository's checks/ and config/settings.py where -c, -C and RFM_CONFIG_FILES are not given),
then ``gpucomm report DIR/report.json -o DIR/report --history EARLIER`` (the other nights' folders
next to DIR: the nightly drift verdict, analysis/drift.py).  Exit status (gpucomm.constants): 0 PASS;
6 FAIL (a test case failed, a variable or the node's score slower than the node's own history, or
ReFrame ended without a report: killed, crashed); 11 SUSPECT (nothing failed, but the drift has
suspects: a night not final, to retest); 7 NOTHING RAN
(no test case selected, every one skipped, e.g. ``-n NoSuchCheck`` or ``--mode noise`` off a
cluster); 2 bad options or a report file that cannot be written; ReFrame's own exit code 2 where
it refused its command line.

A night's folder is its own: DIR/report.json is created before reframe starts (exclusively: a
second run given the same --out, at once or later, refuses in one line), and a folder the run
made and left empty is removed.  SIGTERM, SIGINT or SIGHUP (a cron ``timeout``, Ctrl-C, a closed
terminal) is passed to reframe (SIGINT as SIGINT, the others as SIGTERM: ReFrame then cancels
its jobs and writes its report); whatever of reframe and the processes under it is left after
constants.NIGHTLY_STOP_GRACE_S is killed, and the run ends with a FAIL line and exit 128 + the signal's number.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Sequence
from typing import cast

from ..constants import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    EXIT_REPORT_FAIL,
    EXIT_REPORT_NOTHING_RAN,
)
from ..procs import ReframeRun, Stopped

PREFIX = "gpucomm nightly"
#: the signals that stop a night (a cron ``timeout``: SIGTERM; Ctrl-C: SIGINT; a closed terminal: SIGHUP)
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PREFIX, description=" ".join(__doc__.split("\n\n")[0].split()),
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
    p.add_argument("--night-gap", default=None, metavar="HOURS",
                   help="sessions of a node less than HOURS apart are one night (gpucomm report's; default 6)")
    return p


def _given(extra: Sequence[str], short: str, long: str, env: Sequence[str] = ()) -> bool:
    """Whether reframe's arguments ``extra`` give the option (``-c X``, ``-cX``, ``--checkpath
    X``, ``--checkpath=X``) or one of the environment variables ``env`` does."""
    return (any(a == short or a == long or a.startswith((long + "=",)) or (a.startswith(short) and len(a) > 2
                and not a.startswith("--")) for a in extra)
            or any(os.environ.get(v) for v in env))


def _checks_given(extra: Sequence[str]) -> bool:
    return _given(extra, "-c", "--checkpath", ("RFM_CHECK_SEARCH_PATH",))


def _config_given(extra: Sequence[str]) -> bool:
    return _given(extra, "-C", "--config-file", ("RFM_CONFIG_FILES", "RFM_CONFIG_PATH"))


def reframe_command(mode: str, report_file: str, extra: Sequence[str]) -> list[str]:
    from .inputs import reframe_argv
    cmd = cast("list[str]", reframe_argv())  # None (no ReFrame): the + below raises TypeError, as it did
    if not _config_given(extra):
        config = _repo_path("config", "settings.py")
        cmd += ["-C", config] if config else []
    if not _checks_given(extra):
        checks = _repo_path("checks")
        cmd += ["-c", checks] if checks else []
    return cmd + ["--mode", mode, "-r", "--report-file", report_file] + list(extra)


def missing_repository(extra: Sequence[str]) -> str | None:
    """Why the repository's checks/ or config/settings.py is needed and not found (this folder
    and those above it), or None."""
    if not _checks_given(extra) and not _repo_path("checks"):
        return (f"no checks/ folder in {os.getcwd()} or above it: run in the gpucomm checkout, "
                "or give -c CHECKS")
    if not _config_given(extra) and not _repo_path("config", "settings.py"):
        return (f"no config/settings.py in {os.getcwd()} or above it: run in the gpucomm checkout, "
                "or give -C CONFIG (or RFM_CONFIG_FILES)")
    return None


def writable_folder(path: str) -> str | None:
    """Why a file cannot be created at ``path``, or None."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return f"{folder} is no folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"{folder} is not writable"
    return None


def report_folder_refused(out: str) -> str | None:
    """Why the night cannot have ``out`` as its folder (a dangling symbolic link: old, "File
    exists"), or why gpucomm report could not write the night's report into OUT/report (a file
    there, a folder of the user's own files), or None: said before reframe runs, not after."""
    if os.path.islink(out) and not os.path.exists(out):
        return f"--out {out} is a symbolic link to {os.readlink(out)}, which does not exist: give a folder"
    from .report import output_refused
    folder = os.path.join(out, "report")
    why = output_refused(folder)
    return f"{folder} {why}" if why else None


def _claim(out, report_file):
    """Why the night cannot have ``out`` as its folder, or None: report_file is created there,
    empty, exclusively (ReFrame writes over it)."""
    why = writable_folder(report_file)
    if why:
        return f"the report file {report_file} cannot be written: {why}"
    try:
        os.close(os.open(report_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    except FileExistsError:
        return f"{report_file} exists (an earlier night's, or one running now): give a new --out"
    except OSError as exc:
        return f"the report file {report_file} cannot be written: {exc.strerror}"
    return None


def _release(out, report_file, made):
    """Remove the claim where reframe wrote no report, and the folder where this run made it
    and left it empty."""
    try:
        if os.path.getsize(report_file) == 0:
            os.unlink(report_file)
        if made and not os.listdir(out):
            os.rmdir(out)
    except OSError:
        pass


def _stop_verdict(signum, rc, killed, code):
    name = signal.Signals(signum).name
    if rc is None:
        ended = "reframe had not started"
    else:
        ended = "reframe ended " + (f"(killed by {signal.Signals(-rc).name})" if rc < 0 else f"(exit {rc})")
    left = f"; {killed} process(es) left under it killed" if killed else ""
    report = "" if code is None else f"; its report's verdict was exit {code}"
    _say(f"FAIL: stopped by {name}: {ended}{left}{report}")
    return 128 + signum


def main(argv: list[str] | None = None) -> int:
    args, extra = build_parser().parse_known_args(sys.argv[1:] if argv is None else list(argv))
    if any(a == "--report-file" or a.startswith("--report-file=") for a in extra):
        _say("error: the report file is DIR/report.json (--out DIR), not --report-file")
        return EXIT_BAD_INPUT
    if not args.mode.strip():  # ReFrame's --mode '' runs without a mode, saying nothing
        _say("error: --mode '': give a mode (health, acceptance, paper, ...)")
        return EXIT_BAD_INPUT
    missing = missing_repository(extra)
    if missing:
        _say(f"error: {missing}")
        return EXIT_BAD_INPUT
    from .drift import parse_options
    try:
        since, _ = parse_options(args.since, None if args.night_gap is None else _hours(args.night_gap))
        if since is not None and since.timestamp() > time.time():
            raise ValueError(f"--since {args.since}: a date after tonight (no night would be judged)")
    except ValueError as exc:
        _say(f"error: {exc}")
        return EXIT_BAD_INPUT
    out = args.out or os.path.join("nightly", time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + f"-{os.getpid()}")
    refused = report_folder_refused(out)
    if refused:
        _say(f"error: {refused}")
        return EXIT_BAD_INPUT
    made = not os.path.exists(out)
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        _say(f"error: cannot make {out}: {exc.strerror}")
        return EXIT_BAD_INPUT
    report_file = os.path.join(out, "report.json")
    why = _claim(out, report_file)
    if why:
        _say(f"error: {why}")
        return EXIT_BAD_INPUT
    night = ReframeRun(reframe_command(args.mode, report_file, extra))
    previous = {sig: signal.signal(sig, night.stop) for sig in STOP_SIGNALS}
    try:
        return _night(night, out, report_file, made, args)
    except Stopped as stop:
        if night.proc is None:
            _release(out, report_file, made)
        return _stop_verdict(stop.args[0], night.proc and night.proc.returncode, night.killed, None)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _night(night, out, report_file, made, args):
    rc = night.run()
    reported = os.path.exists(report_file) and os.path.getsize(report_file) > 0
    if not reported:
        _release(out, report_file, made)
    if night.signal is not None:
        code = _report(out, report_file, args) if reported else None
        return _stop_verdict(night.signal, rc, night.killed, code)
    why = f": {night.errors[-1]}" if night.errors else " (killed, crashed, or the folder is full)"
    if rc == EXIT_BAD_INPUT and not reported:
        _say(f"FAIL: reframe refused its command line (exit {rc}){why}")
        return EXIT_BAD_INPUT
    if not reported:
        if rc == 0:
            _say(f"NOTHING RAN: reframe wrote no report to {report_file} (no test case selected, "
                 "or the report could not be written)")
            return EXIT_REPORT_NOTHING_RAN
        _say(f"FAIL: reframe ended with exit {rc} and wrote no report to {report_file}{why}")
        return EXIT_REPORT_FAIL
    code = _report(out, report_file, args)
    if code == EXIT_OK and rc != 0:
        _say(f"FAIL: the report passed but reframe ended with exit {rc}")
        return EXIT_REPORT_FAIL
    return code


def _report(out, report_file, args):
    """gpucomm report on the night, with the earlier nights as its history (the drift verdict)."""
    from .report import ReportOptions, produce
    return produce(ReportOptions(inputs=[report_file], output=os.path.join(out, "report"), quiet=True,
                                 paper="none", history=nightly_history(out, args.history), since=args.since,
                                 night_gap=None if args.night_gap is None else _hours(args.night_gap)))


def _hours(text):
    """--night-gap's value as a number of hours; ValueError with the reason."""
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"--night-gap {text!r} is not a number of hours") from None


if __name__ == "__main__":
    sys.exit(main())


def nightly_history(out: str, given: list | None = None) -> list:
    """The earlier nights of ``gpucomm nightly --out OUT``: ``given`` (``['none']``: none), else the
    report.json of every other folder next to OUT, oldest first by name."""
    import glob
    import os
    if given:
        return [] if [g.lower() for g in given] == ["none"] else list(given)
    here = os.path.abspath(out)
    found = glob.glob(os.path.join(os.path.dirname(here), "*", "report.json"))
    return sorted(p for p in found if os.path.dirname(os.path.abspath(p)) != here)
