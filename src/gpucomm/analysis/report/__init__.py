"""``gpucomm report``: tables and plots from what ReFrame leaves behind.

    gpucomm report output/ perflogs/ reports/run.json -o report/
    gpucomm report bench/results/2026-12-01-nvidia-h200-x2 --history bench/results -o rep --paper-system alps

Inputs (files or folders, searched recursively): ReFrame JSON run reports (``--report-file``),
ReFrame results databases (``*.db``), perflogs (``*.log``, rotated ``*.log.hN``) and the per-size
``gpucomm_results.json`` files that the checks keep in their output folders (or, where that file is
missing or broken, the ``GPUCOMM-RESULT`` lines of ``rfm_job.out``).  The newest run of each test
case is "this run"; older runs of the inputs and everything under ``--history`` are the earlier
runs it is compared with.

Writes into the output folder: ``index.html`` (self-contained: PNGs and CSVs embedded), the PNGs,
``sweeps.csv``, ``nightly.csv``, ``vs_paper.csv``, ``vs_native.csv``, ``inputs.csv`` and
``health.txt`` (also printed, fit for a cron mail).  Exit status 0 when anything usable was
read, 1 when nothing was, 2 for bad options.
"""

import argparse
import os
import sys

USAGE_EPILOG = """
The paper reference (De Sensi et al., SC24) defaults to ../shared/paper_reference.csv next to the
repository; --paper-system maps our partitions to the paper's systems, e.g. --paper-system alps
(every partition) or --paper-system local:h200x2=alps (repeatable; default: all paper systems).
Tolerances: --tolerance 0.1 (all variables) and --tolerance 'latency_*=0.3' (a glob per variable).
"""


def default_paper_csv():
    """The paper data shipped with the package (gpucomm/data)."""
    from ..paper import paper_csv
    return paper_csv()


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        print(f"gpucomm report: error: {message} (see gpucomm report --help)", file=sys.stderr)
        sys.exit(2)


def build_parser():
    p = _Parser(prog="gpucomm report", description=__doc__.split("\n\n")[0].split(": ", 1)[1],
                epilog=USAGE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+", metavar="PATH",
                   help="ReFrame reports, results databases, perflogs, output folders (or folders holding them)")
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
                   help="relative change that flags a perf variable (default 0.1; VAR may be a glob)")
    p.add_argument("--window", type=int, default=5, metavar="N",
                   help="compare with the median of the last N earlier runs (default 5)")
    p.add_argument("--latency-max", default="64K", metavar="SIZE",
                   help="largest size in the latency plots (default 64K)")
    p.add_argument("--heatmap-size", default=None, metavar="SIZE",
                   help="size of the GPU-pair heatmaps (default: the largest size every pair measured)")
    p.add_argument("--title", default="gpucomm report")
    p.add_argument("-q", "--quiet", action="store_true", help="no per-file progress lines")
    p.add_argument("--debug", action="store_true", help="show the traceback of an internal error")
    return p


def main(argv=None):
    args = build_parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    from ...errors import GpucommError
    from ...sizes import parse_size
    from .tables import parse_tolerances
    try:
        latency_max = parse_size(args.latency_max)
        heatmap_size = parse_size(args.heatmap_size) if args.heatmap_size else None
        tolerances = parse_tolerances(args.tolerance)
        if args.window < 1:
            raise ValueError("--window must be at least 1")
    except (GpucommError, ValueError) as exc:
        print(f"gpucomm report: error: {exc}", file=sys.stderr)
        return 2
    mapping = [tuple(item.rpartition("=")[::2]) for item in args.paper_system]
    try:
        return run(args, latency_max, heatmap_size, tolerances, mapping)
    except Exception as exc:  # a bug, not bad input (that is reported and skipped): one line, no traceback
        if args.debug:
            raise
        print(f"gpucomm report: internal error: {type(exc).__name__}: {exc} (--debug shows the traceback)",
              file=sys.stderr)
        return 1


def run(args, latency_max, heatmap_size, tolerances, mapping):
    try:
        import matplotlib  # noqa: F401
        import pandas as pd
    except ImportError as exc:
        print(f"gpucomm report: error: {exc}; install it (pip install pandas matplotlib)", file=sys.stderr)
        return 1
    from . import inputs, render, tables

    def progress(i, n, path):
        if not args.quiet:
            print(f"gpucomm report: [{i}/{n}] {path}", file=sys.stderr, flush=True)

    data = inputs.load(args.inputs, args.history, progress)
    sweeps, cases, perf = data.frames()
    from . import noise
    sweeps, _ = noise.split(sweeps)  # a noise job's quiet/noisy runs: its own section below
    problems = list(data.problems)
    paper_path = args.paper if args.paper is not None else default_paper_csv()
    paper = None
    if paper_path and paper_path.lower() != "none":
        paper, problem = tables.load_paper(paper_path)
        if problem:
            problems.append(problem)
    for p in problems:
        print(f"gpucomm report: warning: {p}", file=sys.stderr)
    if sweeps.empty and cases.empty:
        print("gpucomm report: error: nothing usable found in " + ", ".join(args.inputs)
              + " (expected ReFrame reports, perflogs or gpucomm_results.json files)", file=sys.stderr)
        return 1

    out = args.output
    os.makedirs(out, exist_ok=True)
    cur = tables.current_sweeps(sweeps)
    nightly = tables.compare(perf, cases, tolerances, args.window)
    health = tables.health(cases, nightly, tolerances, args.window)
    paper_t = tables.vs_paper(cur, paper, mapping, args.paper_stat)
    native_t = tables.vs_native(cur)

    csvs = {
        "sweeps.csv": cur.assign(size_label=cur["size"].map(_label)).drop(columns=["history", "source"]),
        "nightly.csv": nightly.assign(time=pd.to_datetime(nightly["time"], unit="s", utc=True)),
        "vs_paper.csv": paper_t,
        "vs_native.csv": native_t,
        "inputs.csv": pd.DataFrame(data.files, columns=["path", "kind", "note"]),
    }
    for name, df in csvs.items():
        df.to_csv(os.path.join(out, name), index=False, float_format="%.8g")
    with open(os.path.join(out, "health.txt"), "w") as fp:
        fp.write(health)
    sections, plot_problems = render.plots(cur, out, latency_max, heatmap_size)
    for p in plot_problems:
        print(f"gpucomm report: warning: {p}", file=sys.stderr)
    problems += plot_problems

    counts = nightly["status"].value_counts()
    stat = args.paper_stat
    tables_html = [
        ("This run: perf variables vs earlier runs", render._table(nightly[NIGHTLY_COLUMNS].assign(
            change=nightly["change"].map(lambda c: f"{c:+.1%}" if pd.notna(c) else ""))),
         f"{len(nightly)} perf variables: " + ", ".join(f"{n} {s}" for s, n in counts.items())
         + " (new: no earlier run; regressed/improved: moved beyond the tolerance)."),
        ("This run vs the paper (ratio = this run / paper)",
         render._table(tables.paper_pivot(paper_t), index=True),
         f"Goodput in GB/s; the paper's {stat} (its Gb/s / 8) at the sizes it measured"
         + (f", from {paper_path}. " if paper is not None else "; no paper reference was read. ")
         + tables.rank_note(paper_t)),
        ("This run vs native tools", render._table(native_t.drop(columns="size")),
         "Our methods against native tools (nccl-tests, osu, ...) on the same op, size and GPU pair."),
        ("This run: per-size results", render._table(tables.sweep_pivot(cur), index=True),
         "Median time (us) and goodput (GB/s) per size; sweeps.csv has every statistic."),
    ]
    noise_part = noise.section(perf, out)
    if noise_part:
        tables_html.append(noise_part[0])
        sections += noise_part[1]
    render.page(os.path.join(out, "index.html"), title=args.title, health_text=health,
                plot_sections=sections, tables=tables_html,
                csv_files=[os.path.join(out, n) for n in csvs], problems=problems, files=data.files)
    print(health, end="")
    print(f"gpucomm report: wrote {os.path.join(out, 'index.html')} ({sum(len(p) for _, p in sections)} plots, "
          f"{len(cur)} sizes, {len(nightly)} perf variables, {len(paper_t)} paper points)", file=sys.stderr)
    return 0


NIGHTLY_COLUMNS = ["system", "partition", "test", "var", "unit", "value", "baseline", "runs", "change", "status"]


def _label(size):
    from ...sizes import size_label
    return size_label(int(size)) if size == size else ""
