"""``gpucomm report``: ReFrame's verdict on a run, with tables and plots from what it leaves behind.

    gpucomm report reports/run.json output/ -o report/
    gpucomm report --stored-sessions -o report/        # ReFrame's results storage (RFM_* environment)
    gpucomm report results.db -o report/              # one results database
    gpucomm report bench/results/2026-12-01-nvidia-h200-x2 --history bench/results -o rep --paper-system alps

Inputs (files or folders, searched recursively): ReFrame JSON run reports (``--report-file``),
ReFrame results databases (``*.db``, read through ``reframe --describe-stored-sessions``), perflogs
(``*.log``, rotated ``*.log.hN``) and the per-size ``gpucomm_results.json`` files that the checks keep
in their output folders (or, where that file is missing or broken, the ``GPUCOMM-RESULT`` lines of
``rfm_job.out``).  The newest run of each test case is "this run"; older runs of the inputs and
everything under ``--history`` are the earlier runs it is compared with.  System and partition are
ReFrame's (each test case's system:partition), never folder names.

The verdict is ReFrame's: a test case failed (its sanity, or a perf variable outside the
per-partition reference of config/references/) fails the run.  The trend against earlier runs is
information only, flagged where a variable moved beyond its own reference bound.

Writes into the output folder: ``index.html`` (PNGs and CSVs up to 1 MB embedded), the PNGs,
``sweeps.csv``, ``trend.csv``, ``vs_paper.csv``, ``vs_native.csv``, ``inputs.csv`` and
``health.txt`` (also printed, fit for a cron mail).  The folder must be new, empty, or one this
command wrote before (it leaves a ``.gpucomm-report`` file there): a user's own files are never
overwritten.  One report at a time writes into a folder (it holds a lock on that file): a second
one given the same folder meanwhile refuses in one line; a folder it made and wrote nothing into
(bad input found late) is removed.

Exit status (gpucomm.constants): 0 ReFrame passed this run; 6 ReFrame failed a test case (or the
nightly drift failed a variable); 11 nothing failed but the nightly drift has suspects (retest);
7 nothing ran (no test case selected, or every one skipped); 8 this run was a --dry-run (nothing
measured); 9 no ReFrame verdict among the inputs (results files only: plots, no verdict);
2 bad options or nothing readable; 1 internal error.
"""

from __future__ import annotations

import argparse
import errno
import fcntl
import os
import sys
from dataclasses import dataclass, field
from typing import IO, Any

from ...constants import ALL_SESSIONS, EXIT_BAD_INPUT, EXIT_INTERNAL

#: tables.parse_tolerances': (the default fraction or None, [(pattern, fraction)])
_Tolerances = tuple[float | None, list[tuple[str, float]]]

USAGE_EPILOG = """
The paper reference (De Sensi et al., SC24) is the copy shipped with gpucomm (gpucomm/data);
--paper-system maps our partitions to the paper's systems, e.g. --paper-system alps
(every partition) or --paper-system local:h200x2=alps (repeatable; default: all paper systems).
Trend flags use each perf variable's reference bound (the one ReFrame judged it by); --tolerance 0.1
(all variables) or --tolerance 'latency_*=0.3' (a glob) flags those without a reference bound.

Exit status: 0 pass, 6 fail, 11 suspect (the nightly drift: retest), 7 nothing ran, 8 dry run,
9 no verdict, 2 bad input, 1 internal error.
"""


#: the file that marks a folder as written by gpucomm report (which may then write into it again)
OUTPUT_MARKER = ".gpucomm-report"


def output_refused(out: str) -> str | None:
    """Why the report may not write into ``out``, or None: only a new or empty folder, or one
    this command wrote before (OUTPUT_MARKER), never a user's own files."""
    if os.path.lexists(out) and not os.path.isdir(out):
        return "is a file, not a folder: give a folder for the report"
    if os.path.isdir(out) and os.listdir(out) and not os.path.exists(os.path.join(out, OUTPUT_MARKER)):
        return (f"holds files that gpucomm report did not write (no {OUTPUT_MARKER}): "
                "give a new or empty folder")
    if os.path.isdir(out) and not os.access(out, os.W_OK | os.X_OK):
        return "is not writable"
    return None


def default_paper_csv() -> str:
    """The paper data shipped with the package (gpucomm/data)."""
    from ..paper import paper_csv
    return paper_csv()


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        print(f"gpucomm report: error: {message} (see gpucomm report --help)", file=sys.stderr)
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="gpucomm report", description=__doc__.split("\n\n")[0].split(": ", 1)[1],
                epilog=USAGE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="*", metavar="PATH",
                   help="ReFrame reports, results databases, perflogs, output folders (or folders holding them)")
    p.add_argument("--stored-sessions", nargs="?", const=ALL_SESSIONS, default=None, metavar="QUERY",
                   help="read the sessions of ReFrame's results storage matching QUERY (ReFrame's syntax; "
                        "default: all) through reframe --describe-stored-sessions; the database is the one "
                        "ReFrame's configuration or RFM_SQLITE_DB_FILE names")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="folder to write the report into")
    p.add_argument("--history", nargs="+", default=[], metavar="PATH",
                   help="earlier runs to compare with (same kinds of input); never count as this run")
    p.add_argument("--paper", metavar="CSV", default=None,
                   help="paper reference CSV ('none': no paper table; default: the copy shipped with gpucomm)")
    p.add_argument("--paper-system", action="append", default=[], metavar="[SYSTEM[:PARTITION]=]NAME",
                   help="compare a partition with this paper system (alps, leonardo, lumi)")
    p.add_argument("--paper-stat", choices=("median", "mean"), default="median",
                   help="the paper's statistic to compare with (default median)")
    p.add_argument("--tolerance", action="append", default=[], metavar="[VAR=]FRACTION",
                   help="relative change that flags a perf variable without a reference bound "
                        "(default: none; VAR may be a glob)")
    p.add_argument("--window", type=int, default=5, metavar="N",
                   help="compare with the median of the last N earlier runs (default 5)")
    p.add_argument("--latency-max", default="64K", metavar="SIZE",
                   help="largest size in the latency plots (default 64K)")
    p.add_argument("--heatmap-size", default=None, metavar="SIZE",
                   help="size of the GPU-pair heatmaps (default: the largest size every pair measured)")
    p.add_argument("--since", default=None, metavar="DATE",
                   help="nightly drift: only nights from DATE on (UTC, e.g. 2026-12-01) make a node's history "
                        "(a repair, a driver update)")
    p.add_argument("--night-gap", type=float, default=None, metavar="HOURS",
                   help="nightly drift: sessions of a node less than HOURS apart are one night (default 6; "
                        "0: every session a night)")
    p.add_argument("--title", default="gpucomm report")
    p.add_argument("-q", "--quiet", action="store_true", help="no per-file progress lines")
    p.add_argument("--debug", action="store_true", help="show the traceback of an internal error")
    return p


@dataclass
class ReportOptions:
    """What a report is asked for: the command line's options (build_parser says each), for a
    caller in the same process (gpucomm nightly) without a command line."""
    inputs: list[str]
    output: str
    stored_sessions: str | None = None
    history: list[str] = field(default_factory=list)
    paper: str | None = None
    paper_system: list[str] = field(default_factory=list)
    paper_stat: str = "median"
    tolerance: list[str] = field(default_factory=list)
    window: int = 5
    latency_max: str = "64K"
    heatmap_size: str | None = None
    since: str | None = None
    night_gap: float | None = None
    title: str = "gpucomm report"
    quiet: bool = False
    debug: bool = False


def main(argv: list[str] | None = None) -> int:
    """``gpucomm report``'s command line."""
    args = build_parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    return produce(ReportOptions(**vars(args)))


def produce(args: ReportOptions) -> int:
    """Write the report ``args`` asks for; its exit status (the module's docstring)."""
    if not args.inputs and args.stored_sessions is None:
        print("gpucomm report: error: give inputs (PATH ...) or --stored-sessions (see gpucomm report --help)",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    from ...errors import GpucommError
    from ...sizes import parse_size
    from .tables import parse_tolerances
    try:
        latency_max = parse_size(args.latency_max)
        heatmap_size = parse_size(args.heatmap_size) if args.heatmap_size else None
        tolerances = parse_tolerances(args.tolerance)
        if args.window < 1:
            raise ValueError("--window must be at least 1")
        from ..drift import parse_options
        since, night_gap = parse_options(args.since, args.night_gap)
    except (GpucommError, ValueError) as exc:
        print(f"gpucomm report: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    mapping = [(key, name) for key, _, name in (item.rpartition("=") for item in args.paper_system)]
    refused = output_refused(args.output)
    lock, made = None, not os.path.lexists(args.output)
    if not refused:
        lock, refused = claim_output(args.output)
    if refused:
        print(f"gpucomm report: error: -o {args.output}: {refused}", file=sys.stderr)
        return EXIT_BAD_INPUT
    from ..drift import DriftInputError
    before = _snapshot(args.output)
    try:
        return run(args, latency_max, heatmap_size, tolerances, mapping, (since, night_gap))
    except DriftInputError as exc:
        print(f"gpucomm report: error: nightly drift: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:
        if exc.errno not in WRITE_ERRNOS:
            return _internal(args, exc)
        _undo(args.output, before)
        print(f"gpucomm report: error: -o {args.output}: cannot write the report ({os.strerror(exc.errno)}): "
              "nothing of it kept", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:  # a bug, not bad input (that is reported and skipped): one line, no traceback
        return _internal(args, exc)
    finally:
        release_output(args.output, lock, made)


def _internal(args: ReportOptions, exc: Exception) -> int:
    """A bug, not bad input (that is reported and skipped): one line, no traceback."""
    if args.debug:
        raise exc
    print(f"gpucomm report: internal error: {type(exc).__name__}: {exc} (--debug shows the traceback)",
          file=sys.stderr)
    return EXIT_INTERNAL


#: the errors of a write that the disk refused (full, over quota, a file size limit, read-only)
WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS)


def _snapshot(out: str) -> dict[str, int]:
    """{file name: mtime in ns} of the files in ``out`` (none: {})."""
    try:
        return {e.name: e.stat().st_mtime_ns for e in os.scandir(out) if e.is_file()}
    except OSError:
        return {}


def _undo(out: str, before: dict[str, int]) -> None:
    """Remove what this report wrote into ``out`` (files new or changed since ``before``, its
    marker aside): a report the disk cut short leaves no half of it, no 0-byte health.txt."""
    for name, mtime in _snapshot(out).items():
        if name != OUTPUT_MARKER and before.get(name) != mtime:
            try:
                os.unlink(os.path.join(out, name))
            except OSError:
                pass


def claim_output(out: str) -> tuple[IO[str] | None, str | None]:
    """(the open marker file holding this report's lock on ``out``, None), or (None, why another
    report holds it): the folder is made and marked (OUTPUT_MARKER) now, locked until
    release_output."""
    try:
        os.makedirs(out, exist_ok=True)
        lock = open(os.path.join(out, OUTPUT_MARKER), "a")
    except OSError as exc:
        return None, f"cannot write there ({exc.strerror})"
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        return None, "another gpucomm report is writing into it now: wait for it, or give another folder"
    return lock, None


def release_output(out: str, lock: IO[str] | None, made: bool) -> None:
    """Drop the lock; remove the folder where this report made it and wrote nothing but its marker."""
    if lock is None:
        return
    try:
        if made and os.listdir(out) == [OUTPUT_MARKER]:
            os.unlink(os.path.join(out, OUTPUT_MARKER))
            os.rmdir(out)
    except OSError:
        pass
    finally:
        lock.close()


def run(args: ReportOptions, latency_max: int, heatmap_size: int | None, tolerances: _Tolerances,
        mapping: list[tuple[str, str]], drift_options: tuple[Any, float | None] = (None, None)) -> int:
    try:
        import matplotlib  # noqa: F401
        import pandas  # noqa: F401
    except ImportError as exc:
        print(f"gpucomm report: error: {exc}; install it (pip install pandas matplotlib)", file=sys.stderr)
        return EXIT_INTERNAL
    from . import noise, render, tables

    data, sweeps, cases, perf, sessions = _read_inputs(args)
    problems = list(data.problems)
    paper_path, paper, paper_problem = _read_paper(args, problems)
    if _bad_inputs(args, mapping, paper, problems, sweeps, cases, sessions):
        return EXIT_BAD_INPUT

    out = args.output  # made and marked by claim_output
    cur = tables.current_sweeps(sweeps)
    nightly = tables.compare(perf, cases, tolerances, args.window)
    status, health, drift_pngs = _with_drift(perf, cases, sessions, nightly, out, drift_options)
    paper_t = tables.vs_paper(cur, paper, mapping, args.paper_stat)
    curves = tables.paper_curves(cur, paper, mapping, args.paper_stat)
    native_t, native_p = tables.vs_native(cur), tables.vs_native_perf(perf, cases)
    paper_line = _paper_line(paper, paper_problem, paper_t)

    csvs = _write_tables(out, data, cur, nightly, paper_t, native_t, native_p, health)
    sections, plot_problems = render.plots(cur, out, latency_max, heatmap_size, curves)
    sections = ([("Nightly drift: flagged variables against their node's history", drift_pngs)]
                if drift_pngs else []) + sections
    _warn(plot_problems)
    problems += plot_problems

    folded = _folded(args, cur, nightly, native_t, native_p, paper_t, paper_line, paper is not None and paper_path)
    noise_part = noise.section(perf, out)
    if noise_part:
        folded.append(noise_part[0])
        sections += noise_part[1]
    glance = render._table(tables.headline(cur, nightly, native_t, native_p, paper_t), table_id="headline-table")
    render.page(os.path.join(out, "index.html"), title=args.title, status=status,
                verdict=health.split("\n", 1)[0].replace("gpucomm health: ", ""),
                failed=tables.failures(cases, nightly),
                trend=[tables.trend_words(nightly), *tables.trend_flagged(nightly)],
                health_text=health,
                headline=(glance, _glance_note(args.paper_stat, paper_line)),
                plot_sections=sections, folded=folded, csv_files=[os.path.join(out, n) for n in csvs],
                problems=problems, files=data.files)
    print(health, end="")
    print(f"gpucomm report: wrote {os.path.join(out, 'index.html')} ({sum(len(p) for _, p in sections)} plots, "
          f"{len(cur)} sizes, {len(nightly)} perf variables); {paper_line}", file=sys.stderr)
    return tables.VERDICT_EXIT[status]


def _with_drift(perf, cases, sessions, nightly, out, drift_options):
    """(status, health text, drift PNGs): the health verdict with the nightly drift's (a node
    slower than its own history fails a run that passed its references)."""
    from ..inputs import release_freed_memory
    from . import tables
    from .drift_page import mark_nodes, report_part
    release_freed_memory()  # the trend's merges before it (a week of 1,024-node nights: 0.35 GB)
    status, _ = tables.verdict(cases, sessions)
    health = tables.health(cases, nightly, sessions)
    drift_lines, drift_pngs, drift = report_part(perf, cases, out, *drift_options)
    first, _, rest = health.partition("\n")
    rest = mark_nodes(rest, drift)
    if not drift.failed.empty and status == tables.PASS:
        status, first = tables.FAIL, first.replace(f": {tables.PASS} (", f": {tables.FAIL} (nightly drift failed; ", 1)
    elif not drift.suspects.empty and status == tables.PASS:
        status, first = tables.SUSPECT, first.replace(
            f": {tables.PASS} (", f": {tables.SUSPECT} (nightly drift: {len(drift.suspects)} suspect(s) to retest; ",
            1)
    return status, "\n".join([first, *drift_lines, rest]), drift_pngs


def _warn(problems):
    for p in problems:
        print(f"gpucomm report: warning: {p}", file=sys.stderr)


def _bad_inputs(args, mapping, paper, problems, sweeps, cases, sessions):
    """Whether the inputs are bad (a --paper-system the paper lacks, nothing usable), said in
    one line; the inputs' problems said as warnings."""
    unknown = sorted({name for _, name in mapping} - set(paper["system"])) if paper is not None else []
    if unknown:
        print(f"gpucomm report: error: --paper-system {', '.join(unknown)}: the paper has "
              f"{', '.join(sorted(set(paper['system'])))}", file=sys.stderr)
        return True
    _warn(problems)
    if sweeps.empty and cases.empty and sessions.empty:
        where = ", ".join(args.inputs + (["ReFrame's results storage"] if args.stored_sessions is not None else []))
        print(f"gpucomm report: error: nothing usable found in {where}"
              " (expected ReFrame reports, stored sessions, perflogs or gpucomm_results.json files)", file=sys.stderr)
        return True
    return False


def _write_tables(out, data, cur, nightly, paper_t, native_t, native_p, health):
    """The CSV tables and health.txt in ``out``: {CSV name: table}."""
    import pandas as pd
    csvs = {
        "sweeps.csv": cur.assign(size_label=cur["size"].map(_label)).drop(columns=["history", "source", "folder"]),
        "trend.csv": nightly.assign(time=pd.to_datetime(nightly["time"], unit="s", utc=True)),
        "vs_paper.csv": paper_t,
        "vs_native.csv": native_t,
        "vs_native_perf.csv": native_p,
        "inputs.csv": pd.DataFrame(data.files, columns=["path", "kind", "note"]),
    }
    for name, df in csvs.items():
        df.to_csv(os.path.join(out, name), index=False, float_format="%.8g")
    with open(os.path.join(out, "health.txt"), "w") as fp:
        fp.write(health)
    return csvs


def _read_inputs(args):
    """The inputs (and the stored sessions) read: (data, sweeps, cases, perf, sessions), a
    noise job's quiet/noisy sweeps left out (the noise section's)."""
    from .. import inputs
    from . import noise

    def progress(i, n, path):
        if not args.quiet:
            print(f"gpucomm report: [{i}/{n}] {path}", file=sys.stderr, flush=True)

    data = inputs.load(args.inputs, args.history, progress)
    if args.stored_sessions is not None:
        inputs.load_storage(data, args.stored_sessions)
    sweeps, cases, perf = data.frames()
    sessions = data.sessions_frame()
    sweeps, _ = noise.split(sweeps)  # a noise job's quiet/noisy runs: its own section below
    return data, sweeps, cases, perf, sessions


def _read_paper(args, problems):
    """(path, the paper's table or None, why not): --paper, else the shipped CSV; a problem
    reading it is added to ``problems``."""
    from . import tables
    paper_path = args.paper if args.paper is not None else default_paper_csv()
    paper, paper_problem = None, None
    if paper_path and paper_path.lower() != "none":
        paper, paper_problem = tables.load_paper(paper_path)
        if paper_problem:
            problems.append(paper_problem)
    return paper_path, paper, paper_problem


def _paper_line(paper, paper_problem, paper_t):
    """The paper comparison in one line, never a silent "0 paper points"."""
    if paper is None:
        return ("paper comparison off (--paper none)" if not paper_problem
                else f"paper comparison not available: {paper_problem}")
    if paper_t.empty:
        return "paper comparison: no point of the paper matches this run's operations, methods and sizes"
    like = int(paper_t["comparable"].sum())
    return (f"paper comparison: {len(paper_t)} points, {like} of the same rank count "
            f"({len(paper_t) - like} across different rank counts, marked and left out of the headline)")


def _folded(args, cur, nightly, native_t, native_p, paper_t, paper_line, paper_path):
    """The page's folded tables, in order: (title, table, note) each (``paper_path``: the
    paper's CSV, False where the paper comparison is off)."""
    from . import render, tables
    stat = args.paper_stat
    trend = _trend_entry(nightly)
    return [
        trend,
        ("This run vs native tools (perf variables)", render._table(native_p),
         "Our checks' perf variables against the native tools' checks (OSU, nccl-tests) at the same point: "
         "ratio = ours / tool (for a latency, above 1 is slower). The tools' values are from their newest "
         "session among the inputs (inputs.csv)."),
        ("This run vs the paper (ratio = this run / paper; same rank count only)",
         render._table(tables.paper_pivot(paper_t), index=True),
         f"{paper_line}. Goodput in GB/s; the paper's {stat} (its Gb/s / 8) at the sizes it measured"
         + (f", from {paper_path}." if paper_path else ".")),
        ("This run vs the paper across different rank counts or layouts (not like for like)",
         render._table(paper_t[~paper_t["comparable"].astype(bool)].drop(columns=["comparable"]))
         if len(paper_t) else render._table(None),
         tables.rank_note(paper_t) or "None: every point above has the paper's rank count."),
        ("This run vs native tools (per size)", render._table(native_t.drop(columns="size")),
         "Our methods against native tools (nccl-tests, osu, ...) on the same op, size and GPU pair."),
        ("This run: per-size results", render._table(tables.sweep_pivot(cur), index=True),
         "Median time (us) and goodput (GB/s) per size; sweeps.csv has every statistic."),
    ]


TREND_NOTE = ("ref/lower/upper: ReFrame's reference; ref-fail: outside it, part of ReFrame's verdict; "
              "new: no earlier run; regressed/improved: moved beyond the reference's bound against the median "
              "of earlier runs, information only; no bound: no reference and no --tolerance.")


def _trend_entry(nightly):
    """The trend's folded table: (title, html, note): every perf value one per row, or, beyond
    tables.TREND_ROWS_MAX of them (a batch of nodes), one row per variable and status
    (tables.trend_summary) and below it only the values flagged (ref-fail, regressed, improved)."""
    import pandas as pd

    from . import render, tables

    def shown(df):
        return df[NIGHTLY_COLUMNS].assign(
            change=df["change"].map(lambda c: f"{c:+.1%}" if pd.notna(c) else ""),
            tolerance=df["tolerance"].map(lambda c: f"{c:.1%}" if pd.notna(c) else ""))
    title = "This run: perf variables vs earlier runs (trend: information)"
    if len(nightly) <= tables.TREND_ROWS_MAX:
        return title, render._table(shown(nightly)), TREND_NOTE
    summary = tables.trend_summary(nightly)
    summary = summary.assign(**{"median change": summary["median change"].map(
        lambda c: f"{c:+.1%}" if pd.notna(c) else "")})
    flagged = nightly[nightly["status"].isin(tables.FINDINGS)]
    nodes = nightly["nodes"].astype(str).str.split(",").explode().nunique()
    body = (render._table(summary, table_id="trend-summary")
            + f'<p class="note">{len(flagged)} perf values flagged (ref-fail, regressed, improved), one row each'
            + (":" if len(flagged) else ".") + "</p>"
            + (render._table(shown(flagged), limit=tables.TREND_ROWS_MAX, table_id="trend-flagged")
               if len(flagged) else ""))
    return (f"{title}: {len(nightly)} perf values of {nodes} nodes, one row per variable and status", body,
            "Per variable and status: how many test cases and nodes, and the spread of their values; the "
            "flagged values one row each below it; every value of every node is in trend.csv beside this page. "
            + TREND_NOTE)


def _glance_note(stat, paper_line):
    """The headline table's note."""
    return (
        "Per partition, operation and method: the median time at 8 B, the goodput at the largest size "
        "measured, and that goodput's ratio (ours / theirs) to the native tool at that size (nccl-tests "
        "beside a ping-pong is its sendrecv: both ranks send at once; -g: one process drives every GPU), "
        f"to the paper (same rank count only; the paper's {stat}) and to ReFrame's reference of its perf "
        "variable, where each exists. Each row is the test case whose sweep reaches the largest size; GPU "
        f"pairs: their median. {paper_line}.")


NIGHTLY_COLUMNS = ["system", "partition", "test", "var", "unit", "value", "ref", "lower", "upper", "baseline", "runs",
                   "change", "tolerance", "status"]


def _label(size):
    from ...sizes import size_label
    return size_label(int(size)) if size == size else ""
