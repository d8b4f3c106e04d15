"""The report's plots and paper comparison (issue 18's plot and paper bullets): sparse sweeps as
markers, 2x pixels, a linear panel for the top decade, anchored heatmap scales, size meaning per
operation, host runs not labelled GPU, one session per plot unless the legend says so, paper
curves on the goodput plots, rank-count mismatches kept out of the headline, an unreadable paper
table said in one line."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from gpucomm.analysis.report import main, render, tables

REPO = Path(__file__).resolve().parents[2]
H200X2 = REPO / "tests" / "data" / "h200x2-runs"  # the reference node's runs
DEVICE = H200X2 / "01-smoke"
SUITE = H200X2 / "02-suite"
MiB, GiB = 1 << 20, 1 << 30


def sweep(method="ccl", op="pingpong", sizes=(8, MiB, 256 * MiB), session="s1", pair=None, nominal=478.0):
    rows = []
    for size in sizes:
        us = 10 + size / 3e5
        rows.append({"system": "local", "partition": "h200x2", "environ": "default", "test": f"T {method}",
                     "op": op, "method": method, "pair": pair, "size": size, "nranks": 2, "nodes": 1,
                     "time_us": us, "time_us_p05": us * 0.95, "time_us_p95": us * 1.05, "time_us_mean": us,
                     "goodput_GBps": size / us / 1e3, "busbw_GBps": size / us / 1e3, "goodput_GBps_best": None,
                     "validated": True, "nominal_GBps": nominal, "nominal_source": "test", "device_name": "GPU",
                     "run_time": pd.Timestamp("2026-11-30T10:00", tz="UTC") + pd.Timedelta(hours=int(session[1:])),
                     "session": session, "history": False, "source": "x", "folder": "T"})
    return pd.DataFrame(rows)


@pytest.fixture
def figures(monkeypatch):
    """The matplotlib figures the plot functions save, kept open for inspection."""
    kept = []
    monkeypatch.setattr(render, "_save", lambda fig, path: kept.append(fig))
    return kept


def test_sparse_sweeps_are_not_joined():
    x, y = render.broken([8, MiB, 256 * MiB], [1, 2, 3])
    assert np.isnan(x).sum() == 2 and np.isnan(y).sum() == 2  # 8 B -/- 1 MiB -/- 256 MiB
    x, y = render.broken([1 << k for k in range(10)], range(10))
    assert not np.isnan(x).any()  # a dense power-of-two sweep is one line


def test_goodput_plot(figures):
    group = pd.concat([sweep("ccl"), sweep("ipc-copy", sizes=[1 << k for k in range(0, 31)])])
    paper = pd.DataFrame({"system": "local", "partition": "h200x2", "op": "pingpong", "method": "ccl",
                          "paper_system": "alps", "paper_ranks": 2, "size": [MiB, GiB], "paper_GBps": [50.0, 125.0]})
    render.goodput_plot("local:h200x2", "pingpong", group, paper, "x.png")
    fig = figures[0]
    assert fig.dpi >= 200  # 2x the pixels of the old 100 dpi
    full, top = fig.axes[:2]
    assert full.get_yscale() == "log" and top.get_yscale() == "linear" and top.get_ylim()[0] == 0
    assert top.get_xlim()[0] >= GiB / 10 / 2  # the top decade of sizes only
    assert full.get_xlabel() == "message size (each way)"
    lines = {ln.get_label(): ln for ln in full.get_lines()}
    ccl = lines["ccl"].get_xdata()
    assert np.isnan(np.asarray(ccl, dtype=float)).sum() == 2  # markers, no line across the gaps
    assert lines["ccl"].get_marker() == "o"
    paper_line = lines["paper alps ccl (2 ranks)"]
    assert paper_line.get_linestyle() == "--" and paper_line.get_alpha() < 0.6  # faint, dashed


def test_size_meaning_per_operation(figures):
    for op, words in (("allreduce", "buffer size per rank"), ("alltoall", "block size per peer")):
        render.goodput_plot("local:h200x2", op, sweep(op=op), None, "x.png")
        assert words in figures[-1].axes[0].get_xlabel()


def test_one_session_per_plot_unless_the_legend_says(figures):
    render.goodput_plot("local:h200x2", "pingpong", sweep(session="s1"), None, "x.png")
    labels = [ln.get_label() for ln in figures[-1].axes[0].get_lines()]
    assert "ccl" in labels
    render.goodput_plot("local:h200x2", "pingpong", pd.concat([sweep(session="s1"), sweep(session="s2")]),
                        None, "x.png")
    labels = [ln.get_label() for ln in figures[-1].axes[0].get_lines()]
    assert "ccl - run of 2026-11-30 11:00" in labels and "ccl - run of 2026-11-30 12:00" in labels
    assert "2 runs (legend)" in figures[-1].axes[0].get_title()


def test_heatmap_scale_anchored_and_host_labels(figures):
    pairs = pd.concat([sweep(method, op="pair-matrix", sizes=[256 * MiB], pair=p).assign(
        goodput_GBps=353.7 + 0.3 * i) for i, p in enumerate(["0-1", "1-0"]) for method in ("ccl",)])
    render.heatmap_plot("local:h200x2", "pair-matrix", "ccl", pairs, None, "x.png")
    image = figures[-1].axes[0].get_images()[0]
    assert image.get_clim() == (0, 478.0)  # 0 to the nominal link, not 353.7 to 354.0
    assert figures[-1].axes[0].get_xlabel() == "to GPU"
    render.heatmap_plot("local:h200x2", "pair-matrix", "host", pairs.assign(method="host"), None, "x.png")
    assert figures[-1].axes[0].get_xlabel() == "to rank" and figures[-1].axes[0].get_ylabel() == "from rank"


def test_pixels_and_paper_curves_in_a_real_report(tmp_path, capsys):
    code = main([str(SUITE), "-o", str(tmp_path), "-q", "--paper-system", "alps"])
    _, err = capsys.readouterr()
    assert code == 0
    width, height = Image.open(tmp_path / "goodput_local_h200x2_pingpong.png").size
    assert width >= 2 * 760 and height >= 2 * 420
    page = (tmp_path / "index.html").read_text()
    assert f'width="{width // 2}"' in page  # shown at half size: sharp on a dense screen
    assert "Verdict (ReFrame's): PASS" in page
    # the collectives ran 2 ranks here, 4 on Alps: marked, and kept out of the headline table
    paper = pd.read_csv(tmp_path / "vs_paper.csv")
    ar = paper[paper["op"] == "allreduce"]
    assert len(ar) and not ar["comparable"].any() and ar["note"].str.contains("ranks differ: this run 2, paper 4").all()
    assert paper[paper["op"] == "pingpong"]["comparable"].all()
    headline = tables.paper_pivot(paper.assign(size_label=""))
    assert set(headline.index.get_level_values("op")) == {"pingpong"}
    assert "across different rank counts, marked and left out of the headline" in err


def test_unreadable_paper_table_is_said(tmp_path, capsys):
    """Before: a silent '0 paper points'."""
    code = main([str(DEVICE), "-o", str(tmp_path), "-q", "--paper", str(tmp_path / "missing.csv")])
    _, err = capsys.readouterr()
    assert code == 0
    assert "paper comparison not available: " in err and "0 paper points" not in err
    assert "paper comparison not available: " in (tmp_path / "index.html").read_text()


def test_native_tool_ratios_from_perf_variables(tmp_path, capsys):
    """The native checks' report (11-tools2) beside ours: ratios per perf variable."""
    native = H200X2 / "11-tools2" / "report-native.json"
    code = main([str(SUITE / "report.json"), str(native), "-o", str(tmp_path), "-q", "--paper", "none"])
    capsys.readouterr()
    assert code == 0
    t = pd.read_csv(tmp_path / "vs_native_perf.csv")
    suite = json.loads((SUITE / "report.json").read_text())["runs"][0]["testcases"]
    ours = next(tc for tc in suite if tc["name"] == "AllReduceCheck %method=ccl")["perfvalues"]
    tool = next(tc for tc in json.loads(native.read_text())["runs"][0]["testcases"]
                if tc["name"] == "NcclTestsCheck %test=all_reduce %mode=mpi")["perfvalues"]
    row = t[(t["test"] == "AllReduceCheck %method=ccl") & (t["var"] == "goodput_1MiB") & (t["tool"] == "nccl-tests")]
    want = ours["local:h200x2:goodput_1MiB"][0] / tool["local:h200x2:goodput_1MiB"][0]
    assert row["ratio"].item() == pytest.approx(want)
    assert set(t[t["method"] == "host"]["tool"]) <= {"osu-host"}  # host against OSU's host buffers only
    assert t[t["tool"] == "nccl-tests-g"]["note"].str.contains("one process").all()


def _method_style_tables():
    """Every module-level table of the report's modules keyed by method whose values are colours
    or markers: {'render.COLORS': dict, ...}."""
    import importlib

    from matplotlib.colors import is_color_like
    from matplotlib.markers import MarkerStyle

    from gpucomm.constants import METHODS
    found = {}
    for name in ("report.render", "report.tables", "report.noise", "report.drift_page", "inputs"):
        module = importlib.import_module(f"gpucomm.analysis.{name}")
        for attr, value in vars(module).items():
            if not isinstance(value, dict) or not set(value) & set(METHODS) or not value:
                continue
            vals = list(value.values())
            if all(isinstance(v, str) and is_color_like(v) for v in vals) or \
                    all(isinstance(v, str) and v in MarkerStyle.markers for v in vals):
                found[f"{name}.{attr}"] = value
    return found


def test_every_colour_and_marker_table_covers_every_method():
    """A method missing from a colour table takes a native tool's spare colour, one
    that changes from plot to plot; each method has its own, and no two share one."""
    from gpucomm.constants import METHODS
    found = _method_style_tables()
    assert "report.render.COLORS" in found  # the rule sees the table it is about
    for name, table in found.items():
        assert set(METHODS) <= set(table), f"{name} lacks {sorted(set(METHODS) - set(table))}"
        assert len({table[m] for m in METHODS}) == len(METHODS), f"{name}: two methods share a style"
    assert not set(render.EXTRA_COLORS) & set(render.COLORS.values())  # a tool never looks like a method


def test_nvshmem_has_its_own_line_colour(figures):
    render.goodput_plot("local:h200x2", "pingpong", pd.concat([sweep("nvshmem"), sweep("ccl"), sweep("nccl-tests")]),
                        None, "x.png")
    lines = {ln.get_label(): ln.get_color() for ln in figures[-1].axes[0].get_lines() if ln.get_label()[0] != "_"}
    assert lines["nvshmem"] == render.COLORS["nvshmem"] and lines["ccl"] == render.COLORS["ccl"]
    assert lines["nccl-tests"] in render.EXTRA_COLORS


def test_every_plotted_operation_and_paper_name_has_its_entry():
    """The per-operation and per-paper tables cover what they are looked up with: every operation
    of the payload that is plotted (the aggressor is a noise run's, with its own section), every
    system of the paper's table for its dash pattern, every method and operation the paper
    measured, and the native tools' counterparts are methods and operations of ours."""
    from gpucomm.analysis.report import default_paper_csv
    from gpucomm.constants import AGGRESSOR, METHODS, OPERATIONS, PAPER_METHOD
    plotted = set(OPERATIONS) - {AGGRESSOR}
    assert plotted <= set(render.SIZE_MEANING), sorted(plotted - set(render.SIZE_MEANING))
    paper = pd.read_csv(default_paper_csv())
    assert set(paper["system"]) <= set(render.PAPER_DASHES)
    assert len(set(render.PAPER_DASHES.values())) == len(render.PAPER_DASHES)  # one pattern each
    assert tables.PAPER_METHODS == PAPER_METHOD and set(PAPER_METHOD) <= set(METHODS)
    assert set(paper["method"]) <= set(PAPER_METHOD.values())
    assert set(tables.PAPER_OPS) <= set(OPERATIONS) and set(paper["operation"]) <= set(tables.PAPER_OPS.values())
    assert all(set(ours) <= set(METHODS) for ours in tables.NATIVE_PAIRS.values())
    assert set(tables.NATIVE_OPS.values()) <= set(OPERATIONS)
