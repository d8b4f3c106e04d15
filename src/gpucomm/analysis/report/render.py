"""PNG plots (matplotlib, Agg) and the self-contained HTML page."""

from __future__ import annotations

import base64
import html
import io
import os
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402
from numpy.typing import ArrayLike  # noqa: E402
from PIL import Image  # noqa: E402  (matplotlib's own dependency)

from ...constants import METHOD_DECLS, METHODS, OPERATION_DECLS, OPERATIONS  # noqa: E402
from ...sizes import size_label  # noqa: E402

#: one colour per method (its declaration's, constants.METHOD_DECLS); a native tool takes the next EXTRA_COLORS
COLORS = {d.name: d.color for d in METHOD_DECLS}
EXTRA_COLORS = ["#d62728", "#8c564b", "#17becf", "#bcbd22", "#aec7e8"]
#: what "size" means per operation (its declaration's, constants.OPERATION_DECLS; gpucomm.metrics:
#: S in each goodput formula), and per pair matrix case
SIZE_MEANING = {**{d.name: d.size_meaning for d in OPERATION_DECLS if d.size_meaning},
                "pair-uni": "message size (each way)", "pair-bidir": "message size per direction"}
#: two measured sizes further apart than this are not joined by a line (a sparse sweep:
#: 8 B, 1 MiB, 256 MiB are markers, not a curve)
MAX_JOIN_RATIO = 4
#: pixels: figures are drawn at this dpi (2x the screen's 100)
DPI = 200
#: paper curves: faint dashes, one pattern per paper system
PAPER_DASHES = {"alps": (4, 2), "leonardo": (1.5, 1.5), "lumi": (6, 2, 1, 2)}


def slug(*parts: object) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", "_".join(str(p) for p in parts)).strip("-")


def _size_axis(ax, sizes, op=None):
    lo, hi = int(np.log2(max(sizes.min(), 1))), int(np.ceil(np.log2(sizes.max())))
    step = 5 if hi - lo > 16 else 2 if hi - lo > 6 else 1
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator([2.0 ** k for k in range(lo - lo % step, hi + 1, step)]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: size_label(int(round(x)))))
    ax.set_xlabel(SIZE_MEANING.get(op, "size"))
    ax.grid(True, which="major", alpha=0.3)


def broken(x: ArrayLike, *ys: ArrayLike) -> tuple[np.ndarray, ...]:
    """x and ys with a NaN between neighbours more than MAX_JOIN_RATIO apart: matplotlib draws no
    line across a gap in the sweep."""
    x = np.asarray(x, dtype=float)
    arrays = [np.asarray(y, dtype=float) for y in ys]
    gaps = np.nonzero(x[1:] / x[:-1] > MAX_JOIN_RATIO)[0] + 1
    return (np.insert(x, gaps, np.nan), *[np.insert(y, gaps, np.nan) for y in arrays])


def _sessions(group):
    """The runs a plot's lines come from: one label per session (its date), '' where one."""
    return group["session"].astype(object).fillna("?").astype(str)


def _lines(group):
    """(label, color, style, DataFrame by size) per method (and session, where a plot holds
    several); pairs folded into their median."""
    out, extra = [], iter(EXTRA_COLORS * 4)
    multi_env = group["environ"].nunique() > 1
    group = group.assign(_session=_sessions(group))
    multi_session = group["_session"].nunique() > 1
    for (method, environ, _session), g in group.groupby(["method", "environ", "_session"], sort=False, dropna=False):
        pairs = g["pair"].dropna().nunique()
        agg = g.groupby("size")[["goodput_GBps", "time_us", "time_us_p05", "time_us_p95"]].median()
        when = g["run_time"].min()
        label = method + (f" [{environ}]" if multi_env else "") + (f" (median of {pairs} pairs)" if pairs > 1 else "") \
            + (f" - run of {when:%Y-%m-%d %H:%M}" if multi_session and pd.notna(when) else "")
        color = COLORS.get(method) or next(extra)
        out.append((label, color, "-" if method in METHODS else "--", agg))
    order = {m: i for i, m in enumerate(METHODS)}
    return sorted(out, key=lambda t: order.get(t[0].split()[0], 99))


def _save(fig, path):
    """PNG with a 256-colour palette: a third of the size, the same look."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi)
    plt.close(fig)
    image = Image.open(buf).convert("RGB")
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(path, optimize=True)


def _legend(ax):
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)


def _title(ax, where, op, group, what):
    dev = group["device_name"].dropna()
    ranks = group["nranks"].dropna()
    runs = _sessions(group).nunique()
    sub = ", ".join(filter(None, [dev.iloc[0] if len(dev) else "",
                                  f"{int(ranks.max())} ranks" if len(ranks) else "",
                                  f"{runs} runs (legend)" if runs > 1 else ""]))
    ax.set_title(f"{where} - {op} {what}" + (f"\n{sub}" if sub else ""), fontsize=10)


def _goodput_lines(ax, group, paper=None, sizes=None):
    for label, color, style, g in _lines(group):
        if sizes is not None:
            g = g[g.index >= sizes]
        x, y, lo, hi = broken(g.index, g["goodput_GBps"], g["goodput_GBps"] * g["time_us"] / g["time_us_p95"],
                              g["goodput_GBps"] * g["time_us"] / g["time_us_p05"])
        ax.plot(x, y, style, marker="o", ms=3, lw=1.5, color=color, label=label)
        # the 5-95 % band of the per-iteration times, as goodput (goodput ~ 1 / time)
        ax.fill_between(x, lo, hi, color=color, alpha=0.15, lw=0)
    for (system, method, ranks), g in (paper.groupby(["paper_system", "method", "paper_ranks"])
                                       if paper is not None and len(paper) else []):
        if sizes is not None:
            g = g[g["size"] >= sizes]
        ax.plot(g["size"], g["paper_GBps"], color=COLORS.get(method, "#444"), lw=1, alpha=0.45,
                dashes=PAPER_DASHES.get(system, (3, 3)), label=f"paper {system} {method} ({int(ranks)} ranks)")


def goodput_plot(where: str, op: str, group: pd.DataFrame, paper: pd.DataFrame | None, path: str) -> None:
    """Log-log goodput over every size, and beside it the top decade of sizes on a linear goodput
    axis (where the methods part at a few percent); the paper's curves for the matching system as
    faint dashed lines; the nominal limit dotted."""
    fig, (ax, top) = plt.subplots(1, 2, figsize=(10.5, 4.4), dpi=DPI, gridspec_kw={"width_ratios": [2.2, 1]})
    _goodput_lines(ax, group, paper)
    top_from = group["size"].max() / 10
    _goodput_lines(top, group, paper, sizes=top_from)
    nominal = group.dropna(subset=["nominal_GBps"]).groupby("nominal_GBps")
    for value, g in nominal:  # one dotted line per limit, named after the methods it limits
        methods = ", ".join(m for m in METHODS if m in set(g["method"])) if nominal.ngroups > 1 else ""
        src = g["nominal_source"].dropna()
        src = src.iloc[0] if len(src) and src.iloc[0] != "none" else ""
        for a in (ax, top):
            a.axhline(value, color="black", ls=":", lw=1.2)
        ax.annotate(f"nominal {value:.4g} GB/s" + (f" ({src})" if src else "") + (f": {methods}" if methods else ""),
                    (0.01, value), xycoords=("axes fraction", "data"), va="bottom", fontsize=7.5)
    ax.set_yscale("log")
    ax.set_ylabel("goodput (GB/s)")
    _size_axis(ax, group["size"], op)
    _title(ax, where, op, group, "goodput")
    ax.set_ylim(top=ax.get_ylim()[1] * 2)  # room for the nominal labels
    sizes = group["size"][group["size"] >= top_from]
    _size_axis(top, sizes, op)
    top.set_xlabel("top decade of sizes")
    top.set_ylim(bottom=0)
    top.set_ylabel("goodput (GB/s, linear)")
    top.set_title("top decade, linear", fontsize=9)
    _legend(top)
    fig.tight_layout()
    _save(fig, path)


def latency_plot(where: str, op: str, group: pd.DataFrame, max_size: int, path: str) -> bool:
    small = group[group["size"] <= max_size]
    if small.empty:
        return False
    fig, ax = plt.subplots(figsize=(7.6, 4.2), dpi=DPI)
    for label, color, style, g in _lines(small):
        x, y, lo, hi = broken(g.index, g["time_us"], g["time_us_p05"], g["time_us_p95"])
        ax.plot(x, y, style, marker="o", ms=3, lw=1.5, color=color, label=label)
        ax.fill_between(x, lo, hi, color=color, alpha=0.15, lw=0)
    span = small["time_us_p95"].max() / small["time_us_p05"].min()
    if span > 4:  # log only where the times span more than a factor of a few
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda y, _: f"{y:g}" if f"{y:g}"[0] in "235" else ""))
    ax.set_ylabel("time (us, median; band 5-95 %)")
    _size_axis(ax, small["size"], op)
    _title(ax, where, op, small, f"latency up to {size_label(int(max_size))}")
    _legend(ax)
    fig.tight_layout()
    _save(fig, path)
    return True


def heatmap_plot(where: str, op: str, method: str, group: pd.DataFrame, size: int | None, path: str) -> bool | None:
    """Goodput per GPU pair (source rows, destination columns) at ``size`` (default: the largest
    size every pair measured)."""
    g = group.dropna(subset=["pair"])
    if g["pair"].nunique() < 2:
        return False
    if size is None:
        common = set.intersection(*(set(s) for _, s in g.groupby("pair")["size"]))
        size = max(common) if common else g["size"].max()
    g = g[g["size"] == size]
    ends = g["pair"].str.split("-", n=1, expand=True).reindex(columns=[0, 1])
    g = g.assign(src=ends[0], dst=ends[1].fillna(""))
    mat = g.pivot_table(index="src", columns="dst", values="goodput_GBps", aggfunc="median")
    key = lambda idx: [(0, int(x), "") if str(x).isdigit() else (1, 0, str(x)) for x in idx]  # noqa: E731
    mat = mat.sort_index(key=key).sort_index(axis=1, key=key)
    fig, ax = plt.subplots(figsize=(1.6 + 0.75 * max(len(mat.columns), 3), 1.6 + 0.6 * max(len(mat), 3)), dpi=DPI)
    # the colour scale starts at 0 and ends at the link's nominal limit where known: a spread of
    # a few tenths of a GB/s is noise, not a difference to paint
    nominal = pd.to_numeric(g["nominal_GBps"], errors="coerce").max()
    top = nominal if pd.notna(nominal) and nominal >= np.nanmax(mat.values) else np.nanmax(mat.values)
    im = ax.imshow(mat.values, cmap="viridis", aspect="auto", vmin=0, vmax=top)
    ax.set_xticks(range(len(mat.columns)), mat.columns)
    ax.set_yticks(range(len(mat.index)), mat.index)
    unit = "rank" if method == "host" else "GPU"  # host runs move host memory between ranks
    ax.set_xlabel(f"to {unit}")
    ax.set_ylabel(f"from {unit}")
    norm = im.norm
    for (i, j), v in np.ndenumerate(mat.values):
        if np.isfinite(v):  # white on the dark half of viridis
            ax.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize=8,
                    color="white" if norm(v) < 0.5 else "black")  # type: ignore[operator]  # a float for a float
    fig.colorbar(im, ax=ax, label="goodput (GB/s)" + (" (scale: 0 to nominal)" if top == nominal else " (from 0)"))
    ax.set_title(f"{where} - {op} {method}\ngoodput per pair at {size_label(int(size))}", fontsize=10)
    fig.tight_layout()
    _save(fig, path)
    return None


def plots(cur: pd.DataFrame, outdir: str, latency_max: int = 64 << 10, heatmap_size: int | None = None,
          paper: pd.DataFrame | None = None) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """Every plot of this run's sweeps: ([(section title, [png paths])], [problems]); ``paper``:
    tables.paper_curves, drawn on the goodput plots."""
    sections, problems = [], []

    def attempt(name, draw, *args):
        path = os.path.join(outdir, name)
        try:
            return path if draw(*args, path) is not False else None
        except Exception as exc:  # noqa: BLE001 - odd data must not stop the rest of the report
            plt.close("all")
            problems.append(f"{name}: not drawn ({type(exc).__name__}: {exc})")

    ops = {op: i for i, op in enumerate(OPERATIONS)}
    groups = sorted(cur.groupby(["system", "partition", "op"]),
                    key=lambda kv: (kv[0][:2], ops.get(kv[0][2], 9), kv[0][2]))
    for (system, partition, op), group in groups:
        where = f"{system}:{partition}"
        group = group[(group["size"] > 0) & (group["goodput_GBps"] > 0)]
        if group.empty:
            continue
        mine = None
        if paper is not None and len(paper):
            mine = paper[(paper["system"] == system) & (paper["partition"] == partition) & (paper["op"] == op)]
        pngs = [attempt(f"goodput_{slug(system, partition, op)}.png", goodput_plot, where, op, group, mine),
                attempt(f"latency_{slug(system, partition, op)}.png", latency_plot, where, op, group, latency_max)]
        for method, g in group.groupby("method"):
            pngs.append(attempt(f"pairs_{slug(system, partition, op, method)}.png", heatmap_plot,
                                where, op, method, g, heatmap_size))
        sections.append((f"{where} - {op}", [p for p in pngs if p]))
    return sections, problems


CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:1600px}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}
.plots{display:flex;flex-wrap:wrap;gap:10px}.plots img{max-width:100%;border:1px solid #eee}
table{border-collapse:collapse;font-size:12px;margin:.5em 0}
th,td{border:1px solid #ddd;padding:2px 6px;text-align:left}th{background:#f3f3f3}td.n{text-align:right}
td.regressed,td.ref-fail,td.fail{background:#f8c9c4}td.improved{background:#cdeccd}
#headline table{font-size:13px}#headline td{padding:3px 8px}
pre{background:#f6f6f6;padding:.6em;font-size:12px;white-space:pre-wrap}
.note{color:#666;font-size:12px}.trend{font-size:14px}
.verdict{font-size:1.3em;font-weight:bold;padding:.4em .6em}.verdict.PASS{background:#d5f0d5}
.verdict.FAIL{background:#f8c9c4}.verdict.OTHER{background:#fbe7b5}
details{margin:.5em 0}summary{cursor:pointer;font-weight:bold;font-size:1.05em;padding:.2em 0}
"""
#: at most this many flagged trend lines on the page's top (the trend table has all)
TREND_LINES = 10


def _table(df, index=False, limit=None, table_id=None):
    if df is None or df.empty:
        return '<p class="note">nothing to show</p>'
    if "pair" in df and df["pair"].isna().all():
        df = df.drop(columns="pair")
    more = ""
    if limit and len(df) > limit:
        more = f'<p class="note">first {limit} of {len(df)} rows; the CSV has all</p>'
        df = df.head(limit)
    text = df.to_html(index=index, na_rep="", border=0, table_id=table_id,
                      float_format=lambda x: f"{x:.0f}" if abs(x) >= 1000 else f"{x:.4g}", escape=True)
    text = re.sub(r"<td>([-+]?[\d.]+(e[-+]?\d+)?%?)</td>", r'<td class="n">\1</td>', text)
    return re.sub(r"<td>(regressed|improved|ref-fail|fail)</td>", r'<td class="\1">\1</td>', text) + more


def _img(path):
    """The PNG at half its pixel size: drawn at 2x (DPI), sharp on a high-density screen."""
    with open(path, "rb") as fp:
        raw = fp.read()
    width = Image.open(io.BytesIO(raw)).size[0] * 100 // DPI
    data = base64.b64encode(raw).decode()
    return (f'<img alt="{html.escape(os.path.basename(path))}" width="{width}" '
            f'src="data:image/png;base64,{data}">')


#: a CSV up to this many bytes is embedded in the page; a larger one (a batch of nodes) is
#: linked beside it, so that the page stays one a browser opens
EMBED_MAX = 1 << 20


def _csv_link(path):
    """A link to the CSV: embedded up to EMBED_MAX bytes, else to the file beside the page."""
    name = html.escape(os.path.basename(path))
    size = os.path.getsize(path)
    if size > EMBED_MAX:
        return f'<a href="{name}">{name}</a> (beside this page, {size / 1e6:.0f} MB: not embedded)'
    with open(path, "rb") as fp:
        data = base64.b64encode(fp.read()).decode()
    return f'<a download="{name}" href="data:text/csv;base64,{data}">{name}</a>'


#: the health text on the page: beyond this many lines (a batch of nodes), the nodes with the
#: same line are one line (health_folded); health.txt beside the page has every node
HEALTH_LINES = 60
#: failed rows listed on the page; health.txt has every one
FAILED_ROWS = 500
_PASS_LINE = re.compile(r"^PASS  (\S+)  (\S+)  (\d+ test cases)$")
_NODE_LINE = re.compile(r"^nightly drift: (\S+) (\S+:\S+): (\d.*)$")


def health_folded(text: str) -> str:
    """The health text with the nodes that say the same thing folded into one line each (their
    count and first and last node): the PASS lines per partition and number of test cases, the
    drift's per-node lines per message; FAIL lines, drift failures and suspects stay one per node.
    Unchanged up to HEALTH_LINES lines."""
    lines = text.rstrip("\n").split("\n")
    if len(lines) <= HEALTH_LINES:
        return text
    groups: dict[tuple[str, str, str], list[str]] = {}
    out: list[str | tuple[str, str, str]] = []
    for line in lines:
        m = _PASS_LINE.match(line) or _NODE_LINE.match(line)
        if not m:
            out.append(line)
            continue
        key = ("PASS" if m.re is _PASS_LINE else "drift", m[2], m[3])
        if key not in groups:
            groups[key] = []
            out.append(key)
        groups[key].append(m[1])

    def folded(key):
        kind, where, what = key
        nodes = groups[key]
        span = nodes[0] if len(nodes) == 1 else f"{len(nodes)} nodes ({nodes[0]} ... {nodes[-1]})"
        return f"PASS  {span}  {where}  {what} each" if kind == "PASS" else f"nightly drift: {span} {where}: {what}"
    return "\n".join(x if isinstance(x, str) else folded(x) for x in out) + "\n"


def _section(ident, heading, body, note=""):
    return (f'<section id="{ident}"><h2>{html.escape(heading)}</h2>'
            + (f'<p class="note">{html.escape(note)}</p>' if note else "") + body + "</section>")


def _folded(heading, body, note="", open_=False):
    return (f"<details{' open' if open_ else ''}><summary>{html.escape(heading)}</summary>"
            + (f'<p class="note">{html.escape(note)}</p>' if note else "") + body + "</details>")


def _failed(status, failed):
    """What ReFrame failed (tables.failures), one row each; one line where nothing did."""
    if len(failed):
        show = failed.assign(**{"system:partition": failed["system"] + ":" + failed["partition"]})
        more = (f'<p class="note">first {FAILED_ROWS} of {len(failed)} rows; health.txt beside this page lists '
                'every one</p>' if len(failed) > FAILED_ROWS else "")
        return _table(show[["nodes", "system:partition", "test", "environ", "problem"]].head(FAILED_ROWS)) + more
    if status == "PASS":
        return "<p>Nothing failed: ReFrame passed every test case of this run that was not skipped.</p>"
    return "<p>No test case was judged (see the verdict above).</p>"


def page(path: str, *, title: str, status: str, verdict: str, failed: pd.DataFrame, trend: list[str],
         health_text: str, headline: tuple[str, str], plot_sections: list[tuple[str, list[str]]],
         folded: list[tuple[str, str, str]], csv_files: list[str], problems: list[str],
         files: list[tuple[str, str, str]]) -> None:
    """The report's page, in the order a site engineer reads it: ReFrame's verdict (``status``:
    tables.verdict's) and what failed (``failed``: tables.failures), the trend in words (``trend``:
    [sentence, flagged lines]), the input problems, the headline table (``headline``: (html,
    note)), the plots (``plot_sections``: [(heading, [png])]), then the long tables folded
    (``folded``: [(heading, html, note)]) and the CSVs."""
    kind = status if status in ("PASS", "FAIL") else "OTHER"
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{CSS}</style></head><body><h1>{html.escape(title)}</h1>",
             f'<p id="verdict" class="verdict {kind}">Verdict (ReFrame\'s): {html.escape(verdict)}</p>']
    sentence, flagged = (trend[0], trend[1:]) if trend else ("", [])
    more = (f'<p class="note">{len(flagged) - TREND_LINES} more in the trend table below</p>'
            if len(flagged) > TREND_LINES else "")
    trend_html = (f'<p class="trend">{html.escape(sentence)}</p>' if sentence else "") + \
        ("<ul>" + "".join(f"<li>{html.escape(t)}</li>" for t in flagged[:TREND_LINES]) + "</ul>" + more
         if flagged else "")
    parts.append(_section("failed", "What failed", _failed(status, failed) + trend_html
                          + _folded("Health summary per node (health.txt, the mail)"
                                    + (" (nodes with the same line folded into one)"
                                       if health_folded(health_text) != health_text else ""),
                                    f"<pre>{html.escape(health_folded(health_text))}</pre>")))
    if problems:
        items = "<ul>" + "".join(f"<li>{html.escape(p)}</li>" for p in problems) + "</ul>"
        parts.append('<section id="problems">'
                     + _folded(f"Input problems ({len(problems)}): the rest of the report still renders",
                               items, open_=len(problems) <= 3) + "</section>")
    parts.append(_section("headline", "This run at a glance", headline[0], headline[1]))
    parts.append('<div id="plots">' + "".join(
        f"<h2>{html.escape(heading)}</h2><div class='plots'>" + "".join(map(_img, pngs)) + "</div>"
        for heading, pngs in plot_sections) + "</div>")
    parts.append('<section id="tables"><h2>Tables</h2>'
                 + "".join(_folded(*t) for t in folded) + "</section>")
    parts.append("<h2>Data</h2><p>CSV (embedded): " + " &middot; ".join(map(_csv_link, csv_files)) + "</p>")
    kinds = pd.Series([k for _, k, _ in files]).value_counts()
    parts.append(f'<p class="note">{len(files)} input files read: '
                 + ", ".join(f"{n} {k}" for k, n in kinds.items()) + "</p></body></html>")
    with open(path, "w") as fp:
        fp.write("\n".join(parts))
