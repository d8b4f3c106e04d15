"""The report's tables: ReFrame's verdict and what it failed, the headline (this run at a glance),
this run's sweeps, this run vs the paper, vs native tools, vs earlier runs (and that trend in
words), and the per-node health summary."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...constants import (
    ALLREDUCE,
    ALLTOALL,
    CCL,
    EXIT_OK,
    EXIT_REPORT_DRY_RUN,
    EXIT_REPORT_FAIL,
    EXIT_REPORT_NO_VERDICT,
    EXIT_REPORT_NOTHING_RAN,
    EXIT_RETEST,
    GPU_AWARE_MPI,
    HOST,
    METHODS,
    MULTI_PINGPONG,
    OPERATIONS,
    PAPER_METHOD,
    PINGPONG,
)
from ...sizes import size_label
from .. import statcore as sc
from ..inputs import CASE_KEY

#: our method -> the paper CSV's method (ipc-copy is the paper's device_copy, host its host_mpi)
PAPER_METHODS = PAPER_METHOD
#: our operation -> the paper CSV's operation (multi ping-pong is the paper's inter-node ping-pong)
PAPER_OPS = {PINGPONG: "pingpong", MULTI_PINGPONG: "pingpong", ALLREDUCE: "allreduce",
             ALLTOALL: "alltoall"}
#: native tool (any method that is not one of ours) -> our methods it is compared with;
#: a tool not listed here is compared with every method that measured the same op and size
NATIVE_PAIRS = {"nccl-tests": (CCL,), "nccl-tests-g": (CCL,), "rccl-tests": (CCL,),
                "rccl-tests-g": (CCL,), "osu": (GPU_AWARE_MPI,), "osu-host": (HOST,),
                "osu-xccl": (CCL,)}
PAPER_COLUMNS = {"system", "scope", "operation", "method", "gpu_pair", "nodes", "ranks", "size_bytes",
                 "goodput_gbps_mean", "goodput_gbps_median", "source_figure"}


def newest(df: pd.DataFrame, key: list[str], history_col: str = "history") -> pd.DataFrame:
    """Rows of the newest run per ``key`` among the non-history rows (column 'run_time' or 'time')."""
    if df.empty:
        return df
    when = "run_time" if "run_time" in df else "time"
    cur = df[~df[history_col].astype(bool)]
    last = cur.groupby(key, dropna=False)[when].transform("max")
    return cur[(cur[when] == last) | last.isna()]


def current_sweeps(sweeps: pd.DataFrame) -> pd.DataFrame:
    cur = newest(sweeps, CASE_KEY)
    return cur.sort_values(["system", "partition", "op", "method", "pair", "size"], na_position="first")


def load_paper(path: str) -> tuple[pd.DataFrame | None, str | None]:
    """(DataFrame, problem or None)."""
    try:
        paper = pd.read_csv(path, keep_default_na=False, na_values=[""])
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        return None, f"{path}: paper reference not read ({exc})"
    missing = PAPER_COLUMNS - set(paper.columns)
    if missing:
        return None, f"{path}: paper reference lacks columns {', '.join(sorted(missing))}: not used"
    for col in ("nodes", "size_bytes", "goodput_gbps_mean", "goodput_gbps_median"):
        paper[col] = pd.to_numeric(paper[col], errors="coerce")
    return paper.dropna(subset=["nodes", "size_bytes"]), None


def _paper_system_for(system, partition, mapping):
    """The paper systems one of our partitions is compared with: every one without a mapping."""
    if not mapping:
        return None
    for pattern, paper_system in mapping:
        if pattern in ("", system, f"{system}:{partition}") or fnmatch.fnmatch(f"{system}:{partition}", pattern):
            return paper_system
    return ""


def vs_paper(cur: pd.DataFrame, paper: pd.DataFrame | None, mapping: Sequence[tuple[str, str]] = (),
             stat: str = "median") -> pd.DataFrame:
    """This run's goodput against the paper's at every point both have: ratio = ours / paper."""
    cols = ["system", "partition", "op", "method", "pair", "size", "size_label", "nranks", "nodes",
            "goodput_GBps", "paper_system", "paper_figure", "paper_ranks", "paper_pair",
            "paper_GBps", "ratio", "comparable", "note"]
    ours = cur[cur["method"].isin(PAPER_METHODS) & cur["op"].isin(PAPER_OPS)].copy()
    if paper is None or ours.empty:
        return pd.DataFrame(columns=cols)
    ours["operation"] = ours["op"].map(PAPER_OPS)
    ours["paper_method"] = ours["method"].map(PAPER_METHODS)
    ref = paper.rename(columns={"system": "paper_system", "method": "paper_method", "ranks": "paper_ranks",
                                "gpu_pair": "paper_pair", "source_figure": "paper_figure",
                                "size_bytes": "size", "nodes": "nodes"})
    ref["paper_GBps"] = ref[f"goodput_gbps_{stat}"] / 8  # Gb/s -> GB/s
    ours["nodes"] = pd.to_numeric(ours["nodes"], errors="coerce").fillna(1).astype(int)
    m = ours.merge(ref, on=["operation", "paper_method", "nodes", "size"])
    want = [_paper_system_for(s, p, mapping) for s, p in zip(m["system"], m["partition"])]
    m = m[pd.Series([w is None or w == ps for w, ps in zip(want, m["paper_system"])], index=m.index, dtype=bool)]
    # a paper point of one GPU pair (LUMI, Fig. 4) only lines up with the same pair of ours
    m = m[m["paper_pair"].isna() | (m["paper_pair"].astype(str) == m["pair"].astype(str))]
    m = m.assign(size_label=m["size"].map(size_label), ratio=m["goodput_GBps"] / m["paper_GBps"])
    # a ratio across different rank counts (our 2 local ranks against LUMI's 8 GCDs) is no like for like
    same = pd.to_numeric(m["nranks"], errors="coerce") == pd.to_numeric(m["paper_ranks"], errors="coerce")
    m["comparable"] = same
    m["note"] = [("" if ok else f"ranks differ: this run {_int(n)}, paper {_int(p)}")
                 for ok, n, p in zip(same, m["nranks"], m["paper_ranks"])]
    return m[cols].sort_values(["system", "partition", "op", "method", "size", "paper_system"])


def _int(x):
    return str(int(x)) if pd.notna(x) else "?"


def paper_curves(cur: pd.DataFrame, paper: pd.DataFrame | None, mapping: Sequence[tuple[str, str]] = (),
                 stat: str = "median") -> pd.DataFrame:
    """The paper's goodput curves that match this run's plots: per (system, partition, op, method)
    of ours, every matching paper system's pair-less points at the same node count (GB/s)."""
    cols = ["system", "partition", "op", "method", "paper_system", "paper_ranks", "size", "paper_GBps"]
    if paper is None or cur.empty:
        return pd.DataFrame(columns=cols)
    ours = cur[cur["method"].isin(PAPER_METHODS) & cur["op"].isin(PAPER_OPS)]
    ours = ours.assign(nodes=pd.to_numeric(ours["nodes"], errors="coerce").fillna(1).astype(int))
    ours = ours[["system", "partition", "op", "method", "nodes"]].drop_duplicates()
    ours = ours.assign(operation=ours["op"].map(PAPER_OPS), paper_method=ours["method"].map(PAPER_METHODS))
    ref = paper[paper["gpu_pair"].isna()].rename(columns={"system": "paper_system", "method": "paper_method",
                                                         "ranks": "paper_ranks", "size_bytes": "size"})
    ref = ref.assign(paper_GBps=ref[f"goodput_gbps_{stat}"] / 8)
    m = ours.merge(ref, on=["operation", "paper_method", "nodes"])
    want = [_paper_system_for(s, p, mapping) for s, p in zip(m["system"], m["partition"])]
    m = m[pd.Series([w is None or w == ps for w, ps in zip(want, m["paper_system"])], index=m.index, dtype=bool)]
    m = m.drop_duplicates(["system", "partition", "op", "method", "paper_system", "paper_ranks", "size"])
    return m[cols].sort_values(["system", "partition", "op", "method", "paper_system", "size"])


def paper_pivot(table: pd.DataFrame) -> pd.DataFrame:
    """One row per (partition, op, method, size): ours, then paper GB/s and ratio per paper system;
    only points of the same rank count (like for like)."""
    if table.empty:
        return table
    table = table[table["comparable"].astype(bool)]
    if table.empty:
        return table
    t = table.assign(where=table["system"] + ":" + table["partition"])
    idx = ["where", "op", "method", "size", "size_label"]
    ours = t.groupby(idx)["goodput_GBps"].first().rename(("this run", "GB/s"))
    wide = t.pivot_table(index=idx, columns="paper_system", values=["paper_GBps", "ratio"], aggfunc="first")
    wide = wide.swaplevel(axis=1).sort_index(axis=1, level=0)
    wide.columns = pd.MultiIndex.from_tuples([(s, "paper GB/s" if v == "paper_GBps" else "ratio")
                                              for s, v in wide.columns])
    out = pd.concat([ours, wide], axis=1).reset_index(level="size", drop=True)
    return out.rename_axis(index=["system:partition", "op", "method", "size"])


def rank_note(table: pd.DataFrame) -> str:
    """Where this run and the paper used different rank counts, per op: one sentence, or ''."""
    diff = table[table["nranks"] != table["paper_ranks"]]
    if diff.empty:
        return ""
    parts = []
    for op, g in diff.groupby("op"):
        ours = "/".join(str(int(n)) for n in sorted(g["nranks"].dropna().unique()))
        theirs = ", ".join(f"{s} {'/'.join(str(int(r)) for r in sorted(gs['paper_ranks'].unique()))}"
                           for s, gs in g.groupby("paper_system"))
        parts.append(f"{op}: this run {ours}, paper {theirs}")
    return "Rank counts differ (" + "; ".join(parts) + "): compare those ratios with care."


def sweep_pivot(cur: pd.DataFrame) -> pd.DataFrame:
    """One row per (partition, op, size): median time and goodput of every method (pairs: median)."""
    if cur.empty:
        return cur
    t = cur.assign(where=cur["system"] + ":" + cur["partition"], size_label=cur["size"].map(size_label))
    wide = t.pivot_table(index=["where", "op", "size", "size_label"], columns="method",
                         values=["time_us", "goodput_GBps"], aggfunc="median")
    if wide.empty:
        return wide
    order = {m: i for i, m in enumerate(METHODS)}
    wide = wide.swaplevel(axis=1)
    wide = wide[sorted(wide.columns, key=lambda c: (order.get(c[0], 99), c[0], c[1] != "time_us"))]
    wide.columns = pd.MultiIndex.from_tuples([(m, "us" if v == "time_us" else "GB/s") for m, v in wide.columns])
    return wide.reset_index(level="size", drop=True).rename_axis(index=["system:partition", "op", "size"])


def vs_native(cur: pd.DataFrame) -> pd.DataFrame:
    """Our methods against native tools (nccl-tests, osu, ...) on the same op, size and pair."""
    cols = ["system", "partition", "op", "pair", "size", "size_label", "method", "tool", "goodput_GBps",
            "tool_goodput_GBps", "goodput_ratio", "busbw_GBps", "tool_busbw_GBps", "busbw_ratio"]
    native = cur[~cur["method"].isin(METHODS)]
    ours = cur[cur["method"].isin(METHODS)]
    if native.empty or ours.empty:
        return pd.DataFrame(columns=cols)
    key = ["system", "partition", "op", "pair", "size"]
    tool = native[key + ["method", "goodput_GBps", "busbw_GBps"]].rename(
        columns={"method": "tool", "goodput_GBps": "tool_goodput_GBps", "busbw_GBps": "tool_busbw_GBps"})
    m = ours.merge(tool, on=key)
    keep = [meth in NATIVE_PAIRS.get(t, METHODS) for meth, t in zip(m["method"], m["tool"])]
    m = m[pd.Series(keep, index=m.index, dtype=bool)].assign(size_label=lambda d: d["size"].map(size_label),
                       goodput_ratio=lambda d: d["goodput_GBps"] / d["tool_goodput_GBps"],
                       busbw_ratio=lambda d: d["busbw_GBps"] / d["tool_busbw_GBps"])
    return m[cols].sort_values(["system", "partition", "op", "tool", "method", "size"])


#: a native tool's operation -> ours where the names differ (nccl-tests sendrecv: both ranks send
#: at once, beside our ping-pong, as bench/side_by_side.py pairs them)
NATIVE_OPS = {"sendrecv": PINGPONG}
#: native tools whose layout differs from our checks' (one process driving every GPU)
NATIVE_LAYOUT = {"nccl-tests-g": "one process, every GPU (-g)", "nccl-tests": "", "osu-xccl": ""}


def vs_native_perf(perf: pd.DataFrame, cases: pd.DataFrame) -> pd.DataFrame:
    """This run's perf variables against the native tools' (OSU, nccl-tests checks) of the same
    op and point: ratio = ours / tool (latency: above 1 is slower)."""
    cols = ["system", "partition", "op", "var", "method", "test", "value", "unit", "tool", "tool_test",
            "tool_value", "ratio", "note"]
    cur_cases = newest(cases, CASE_KEY)
    if perf.empty or cur_cases.empty:
        return pd.DataFrame(columns=cols)
    cur = perf.merge(cur_cases[CASE_KEY + ["time"]], on=CASE_KEY + ["time"])
    native = cur[cur["tool"].notna()]
    ours = cur[cur["tool"].isna()].drop(columns=["tool"])
    if native.empty or ours.empty:
        return pd.DataFrame(columns=cols)
    # the health check's variables carry their method: ccl_goodput_1MiB
    split = ours["var"].str.extract(r"^(" + "|".join(METHODS) + r")_(.+)$")
    has = split[0].notna()
    ours.loc[has, "method"] = split.loc[has, 0]
    ours.loc[has, "var"] = split.loc[has, 1]
    native = native.assign(op=native["op"].map(lambda o: NATIVE_OPS.get(o, o)))
    key = ["system", "partition", "op", "var"]
    tool = native[key + ["tool", "test", "value", "nranks"]].rename(
        columns={"test": "tool_test", "value": "tool_value", "nranks": "tool_nranks"})
    m = ours.merge(tool, on=key)
    keep = [meth in NATIVE_PAIRS.get(t, METHODS) for meth, t in zip(m["method"], m["tool"])]
    m = m[pd.Series(keep, index=m.index, dtype=bool)]
    m = m.assign(ratio=m["value"] / m["tool_value"],
                 note=[", ".join(filter(None, [NATIVE_LAYOUT.get(t, ""),
                                               "both ranks send at once" if "sendrecv" in str(tt) else ""]))
                       for t, tt in zip(m["tool"], m["tool_test"])])
    return m[cols].sort_values(["system", "partition", "op", "method", "var", "tool"]).reset_index(drop=True)


def parse_tolerances(items: Iterable[str] | None, default: float | None = None
                     ) -> tuple[float | None, list[tuple[str, float]]]:
    """['0.2', 'latency_*=0.3'] -> (default, [(pattern, fraction)]); percentages ('20%') too.
    These apply only to perf variables without a reference bound (ReFrame's own bounds come first)."""
    patterns = []
    for item in items or []:
        pattern, _, value = item.rpartition("=")
        value = value.strip()
        try:
            frac = float(value[:-1]) / 100 if value.endswith("%") else float(value)
        except ValueError:  # old: "could not convert string to float: 'abc'", not naming the option
            frac = float("nan")
        if not frac >= 0 or frac == float("inf"):
            raise ValueError(f"tolerance {item!r} is not a fraction >= 0")
        if pattern:
            patterns.append((pattern, frac))
        else:
            default = frac
    return default, patterns


def _baselines(m: pd.DataFrame, key: list, window: int) -> pd.DataFrame:
    """Per ``key`` group of ``m`` (earlier runs, oldest first): the last ``window`` runs' centre,
    statcore.location of their logarithms (one slow run is skipped; a value <= 0 is none), and
    their count; every group at once (one row of ``window`` values a group)."""
    last = m.groupby(key).tail(window)
    g = last.groupby(key)
    group, pos = g.ngroup().to_numpy(), g.cumcount().to_numpy()
    sizes = g.size()
    ok = group >= 0
    v = last["old"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.where(np.isfinite(v) & (v > 0), np.log(np.where(v > 0, v, 1.0)), np.nan)
    rows = np.full((len(sizes), window), np.nan)
    rows[group[ok], pos[ok]] = logs[ok]
    with np.errstate(invalid="ignore"):
        centre = np.exp(np.asarray(sc.location(rows), dtype=float).reshape(len(sizes)))
    return sizes.rename("runs").reset_index().assign(baseline=centre)[key + ["baseline", "runs"]]


def _bound(ref, lower, upper, var, lower_better, tolerances):
    """(fraction a variable may move the worse way, where the fraction comes from): the bound of its
    ReFrame reference (upper for a time, lower for a bandwidth, relative as ReFrame's), else a
    --tolerance, else (nan, '')."""
    thres = upper if lower_better else lower
    if pd.notna(thres) and pd.notna(ref) and ref != 0:
        return abs(float(thres)), "reference"
    default, patterns = tolerances
    frac = next((f for p, f in patterns if fnmatch.fnmatch(var, p)), default)
    return (float(frac), "--tolerance") if frac is not None else (float("nan"), "")


_NAN = object()  # _memo's key for every NaN (no NaN equals another)


def _memo(fn):
    """``fn`` of a row's few distinct arguments, computed once each (a batch repeats its units,
    bounds and variables on every node)."""
    seen: dict = {}

    def call(*args):
        key = tuple(_NAN if isinstance(a, float) and a != a else a for a in args)
        if key not in seen:
            seen[key] = fn(*args)
        return seen[key]
    return call


def compare(perf: pd.DataFrame, cases: pd.DataFrame,
            tolerances: tuple[float | None, Sequence[tuple[str, float]]] = (None, ()), window: int = 5
            ) -> pd.DataFrame:
    """The trend, as information: this run's perf variables against the centre (statcore.location) of up to ``window``
    earlier runs of the same test case, flagged where the change is beyond the variable's own
    reference bound (the bound ReFrame judged it by); status: regressed / improved (moved beyond
    the bound), ok, new (no earlier run), no bound (no reference and no --tolerance), ref-fail
    (ReFrame's own reference check failed: part of ReFrame's verdict)."""
    cols = CASE_KEY + ["nodes", "var", "unit", "value", "ref", "lower", "upper", "baseline", "runs", "change",
                       "tolerance", "bound_from", "status", "time"]
    cur_cases = newest(cases, CASE_KEY)
    if perf.empty or cur_cases.empty:
        return pd.DataFrame(columns=cols)
    cur = perf.merge(cur_cases[CASE_KEY + ["time"]], on=CASE_KEY + ["time"])
    cur = cur.drop_duplicates(CASE_KEY + ["var"], keep="last")
    hist = perf[["var", "value", "time", "result", "session"] + CASE_KEY].rename(
        columns={"value": "old", "time": "old_time", "session": "old_session"})
    hist = hist[hist["result"] != "skip"].drop(columns="result")
    m = cur[CASE_KEY + ["var", "time", "session"]].merge(hist, on=CASE_KEY + ["var"])
    # an earlier run: another session, or (a perflog line has none) more than a second older
    known = m["session"].notna() & m["old_session"].notna()
    m = m[(m["old_time"] < m["time"])
          & ((known & (m["session"] != m["old_session"])) | (m["old_time"] < m["time"] - 1))]
    m = m.sort_values("old_time")
    base = _baselines(m, CASE_KEY + ["var"], window)
    cur = cur.merge(base, on=CASE_KEY + ["var"], how="left")
    cur["runs"] = cur["runs"].fillna(0).astype(int)
    if cur.empty:
        return pd.DataFrame(columns=cols)
    better = _memo(sc.lower_is_better)
    lower_better = [better(u, lo, hi) for u, lo, hi in zip(cur["unit"], cur["lower"], cur["upper"])]
    bound = _memo(lambda ref, lo, hi, var, lb: _bound(ref, lo, hi, var, lb, tolerances))
    bounds = [bound(*a) for a in zip(cur["ref"], cur["lower"], cur["upper"], cur["var"], lower_better)]
    cur["tolerance"] = [b for b, _ in bounds]
    cur["bound_from"] = [w for _, w in bounds]
    cur["change"] = cur["value"] / cur["baseline"] - 1
    worse = pd.Series([(c > 0) if lb else (c < 0) for c, lb in zip(cur["change"], lower_better)], index=cur.index)
    moved = cur["change"].abs() > cur["tolerance"]
    cur["status"] = "ok"
    cur.loc[cur["tolerance"].isna(), "status"] = "no bound"
    cur.loc[cur["baseline"].isna(), "status"] = "new"
    cur.loc[moved & ~worse, "status"] = "improved"
    cur.loc[moved & worse, "status"] = "regressed"
    cur.loc[cur["var_result"].astype(str) == "fail", "status"] = "ref-fail"
    first = {"ref-fail": 0, "regressed": 1, "improved": 2}  # flagged rows on top
    cur = cur.assign(_o=cur["status"].map(first).fillna(3)).sort_values(["_o"] + CASE_KEY + ["var"])
    return cur[cols].reset_index(drop=True)


def _fmt(value, unit):
    return f"{value:.4g} {unit}" if pd.notna(value) else "n/a"


PASS, FAIL, NOTHING_RAN, DRY_RUN, NO_VERDICT = "PASS", "FAIL", "NOTHING RAN", "DRY RUN", "NO VERDICT"
#: ReFrame passed, but the nightly drift has suspects: not final (retest tonight)
SUSPECT = "SUSPECT"
#: verdict -> the report's exit code
VERDICT_EXIT = {PASS: EXIT_OK, FAIL: EXIT_REPORT_FAIL, NOTHING_RAN: EXIT_REPORT_NOTHING_RAN,
                DRY_RUN: EXIT_REPORT_DRY_RUN, NO_VERDICT: EXIT_REPORT_NO_VERDICT, SUSPECT: EXIT_RETEST}
#: ReFrame's results that are no failure (a skip is no failure, but tests nothing)
GOOD_RESULTS = ("pass", "xfail")


def verdict(cases: pd.DataFrame, sessions: pd.DataFrame | None = None) -> tuple[str, str]:
    """ReFrame's verdict on this run: (PASS / FAIL / NOTHING RAN / DRY RUN / NO VERDICT, reason).
    This run is the newest run of every test case among the (non-history) inputs, or the newest
    session where that selected no test case at all."""
    cur = newest(cases, CASE_KEY)
    sess = sessions if sessions is not None else pd.DataFrame(columns=["session", "time", "num_cases", "history"])
    sess = sess[~sess["history"].astype(bool)]
    if len(sess) and sess["time"].notna().any():
        last = sess.loc[sess["time"].idxmax()]
        if int(last["num_cases"] or 0) == 0 and (cur.empty or not last["time"] < cur["time"].max() - 1):
            return NOTHING_RAN, f"ReFrame session {last['session']} selected no test case"
    if cur.empty:
        return NO_VERDICT, "no ReFrame test case results among the inputs (reports, stored sessions, perflogs)"
    dry = cur[cur["dry_run"].fillna(False).astype(bool)]
    if len(dry):
        ids = sorted(set(dry["session"].dropna().astype(str)))
        where = f"session {', '.join(ids)}" if ids else "perflog lines"
        return DRY_RUN, f"{len(dry)} of {len(cur)} test cases come from a --dry-run ({where}): nothing was measured"
    ran = cur[cur["result"] != "skip"]
    if ran.empty:
        return NOTHING_RAN, f"all {len(cur)} test cases were skipped"
    failed = ran[~ran["result"].astype(str).isin(GOOD_RESULTS)]
    skipped = len(cur) - len(ran)
    tail = f", {skipped} skipped" if skipped else ""
    if len(failed):
        return FAIL, f"ReFrame failed {len(failed)} of {len(ran)} test cases run{tail}"
    return PASS, f"ReFrame passed all {len(ran)} test cases run{tail}"


def failures(cases: pd.DataFrame, comparison: pd.DataFrame) -> pd.DataFrame:
    """What ReFrame failed in this run, one row per problem: a test case that failed (its phase
    and reason) and a perf variable outside its ReFrame reference (its value and bounds); columns
    CASE_KEY, nodes and problem (the sentence health() and the page show)."""
    cols = CASE_KEY + ["nodes", "problem"]
    cur = newest(cases, CASE_KEY)
    ref_fail = comparison[comparison["status"] == "ref-fail"] if len(comparison) else comparison
    outside: dict[tuple, list[str]] = {}
    for row in ref_fail.to_dict("records"):
        outside.setdefault(_key(row[k] for k in CASE_KEY), []).append(
            f"{row['var']} = {_fmt(row['value'], row['unit'])} outside its ReFrame reference{_ref_text(row)}")
    ran = cur[cur["result"] != "skip"]
    bad = ~ran["result"].astype(str).isin(GOOD_RESULTS).to_numpy()
    bad |= np.array([k in outside for k in _keys(ran)], dtype=bool)
    rows = []
    for case in ran[bad].to_dict("records"):
        values = [case[k] for k in CASE_KEY]
        if str(case["result"]) not in GOOD_RESULTS:
            phase = f" in {case['fail_phase']}" if pd.notna(case["fail_phase"]) else ""
            reason = f": {case['fail_reason']}" if pd.notna(case["fail_reason"]) else ""
            rows.append([*values, case["nodes"], f"{case['result']}{phase}{reason}"])
        rows += [[*values, case["nodes"], problem] for problem in outside.get(_key(values), [])]
    return pd.DataFrame(rows, columns=cols)


def _key(values: Iterable[Any]) -> tuple:
    """A test case's CASE_KEY values as a dictionary key (a missing value, NaN or None, as None)."""
    return tuple(None if pd.isna(v) else v for v in values)


def _keys(df: pd.DataFrame) -> list[tuple]:
    """Each row's CASE_KEY as a dictionary key (_key)."""
    return [_key(values) for values in zip(*(df[k] for k in CASE_KEY))] if len(df) else []


#: the first words of the trend's line: it never decides the verdict
TREND = "trend (information, not the verdict)"
#: the trend's statuses that moved beyond their bound, listed one per line
FLAGGED = ("regressed", "improved")


def _n(count, one, many):
    return f"{count} {one if count == 1 else many}"


#: comparison status -> how the trend line counts it (singular, plural), in the line's order
TREND_WORDS = {
    "regressed": ("got worse beyond its bound", "got worse beyond their bounds"),
    "improved": ("got better beyond its bound", "got better beyond their bounds"),
    "ok": ("within its bound", "within their bounds"),
    "no bound": ("with no bound to judge a change by (no ReFrame reference, no --tolerance)",) * 2,
    "ref-fail": ("outside its ReFrame reference (ReFrame's verdict)",
                 "outside their ReFrame reference (ReFrame's verdict)"),
    "new": ("new: no earlier run to compare with",) * 2,
}


def trend_words(comparison: pd.DataFrame) -> str:
    """The trend against earlier runs in words: what the comparison found, not its statuses."""
    n = len(comparison)
    if n == 0:
        return f"{TREND}: this run has no perf values to compare with earlier runs."
    runs = comparison["runs"]
    if not (runs > 0).any():
        return (f"{TREND}: first run: no earlier run of these test cases among the inputs; "
                f"{'its one perf value has' if n == 1 else f'none of its {n} perf values has'} anything to "
                "compare with yet (give earlier runs as inputs or with --history).")
    counts = comparison["status"].value_counts()
    seen = runs[runs > 0]
    against = ("the run before" if seen.max() == 1 else
               f"the centre of the {seen.max()} runs before" if seen.nunique() == 1 else
               f"the centre of up to {seen.max()} runs before")
    parts = [_n(counts[status], *words) for status, words in TREND_WORDS.items() if counts.get(status, 0)]
    return f"{TREND}: {_n(n, 'perf value', 'perf values')} against {against}: " + "; ".join(parts) + "."


def trend_flagged(comparison: pd.DataFrame) -> list[str]:
    """One sentence per perf variable that moved beyond its bound (FLAGGED), in compare()'s order
    (the regressions first)."""
    if not len(comparison):
        return []
    flagged = comparison[comparison["status"].isin(FLAGGED)]
    return [f"{row['status']}: {row['test']} [{row['environ']}]: {row['var']} = "
            f"{_fmt(row['value'], row['unit'])}, {row['change']:+.0%} vs {_fmt(row['baseline'], row['unit'])} ("
            + ("the run before" if row["runs"] == 1 else f"centre of {row['runs']} earlier runs")
            + f"; bound {row['tolerance']:.1%} from the {row['bound_from']})" for _, row in flagged.iterrows()]


def health(cases: pd.DataFrame, comparison: pd.DataFrame, sessions: pd.DataFrame | None = None) -> str:
    """Plain text for a cron mail: ReFrame's verdict, one PASS/FAIL line per node with the failing
    checks below it, then the trend against earlier runs (information only)."""
    status, reason = verdict(cases, sessions)
    cur = newest(cases, CASE_KEY)
    when = pd.to_datetime(cur["time"].max(), unit="s", utc=True) if len(cur) else pd.NaT
    when = "" if pd.isna(when) else f", run of {when.strftime('%Y-%m-%d %H:%M UTC')}"
    lines = [f"gpucomm health: {status} ({reason}){when}"]
    failed = failures(cases, comparison)
    problems: dict[tuple, list[str]] = {}
    for key, problem in zip(_keys(failed), failed["problem"]):
        problems.setdefault(key, []).append(problem)
    per_node: dict[tuple[str, str], list[Any]] = {}
    ran = cur[cur["result"] != "skip"]
    for key, nodes, (system, partition, environ, test) in zip(
            _keys(ran), ran["nodes"], zip(*(ran[k] for k in CASE_KEY[:4]))):
        why = [f"{test} [{environ}]: {w}" for w in problems.get(key, [])]
        for node in str(nodes).split(","):
            entry = per_node.setdefault((node, f"{system}:{partition}"), [0, []])
            entry[0] += 1
            entry[1] += why
    for (node, where), (n, why) in sorted(per_node.items()) if status in (PASS, FAIL) else ():
        lines.append(f"{'FAIL' if why else 'PASS'}  {node}  {where}  {n} test cases"
                     + (f", {len(why)} problems" if why else ""))
        lines += [f"      {w}" for w in why]
    if len(comparison):
        lines.append(trend_words(comparison))
        lines += [f"      {w}" for w in trend_flagged(comparison)]
    return "\n".join(lines) + "\n"


def _ratios(df, by, value):
    """'ratio by' per distinct ``by`` (median over pairs and tests), joined: '1.00 nccl-tests; ...'."""
    if df is None or df.empty:
        return ""
    med = df.groupby(by)[value].median().dropna()
    return "; ".join(f"{r:.2f} {name}" for name, r in med.items())


#: the headline's columns (tables.headline), in the page's words
HEADLINE_COLUMNS = ["system:partition", "op", "method", "environ", "8 B latency (us)", "largest size",
                    "goodput (GB/s)", "vs native tool", "vs paper", "vs reference"]


def headline(cur: pd.DataFrame, comparison: pd.DataFrame, native_t: pd.DataFrame, native_p: pd.DataFrame,
             paper_t: pd.DataFrame) -> pd.DataFrame:
    """This run at a glance, one row per partition, operation and method of ours: the median time
    at 8 B, the goodput at the largest size, and that goodput's ratio (ours / theirs) to the native
    tools (per size, else their perf variable at that size), to the paper (same rank count only)
    and to ReFrame's reference of the perf variable at that size, where each exists.  Each row is
    the test case whose sweep reaches the largest size (GPU pairs: their median)."""
    ours = cur[cur["method"].isin(METHODS) & (cur["size"] > 0)] if len(cur) else cur
    if ours.empty:
        return pd.DataFrame(columns=HEADLINE_COLUMNS)
    op_order, method_order = {op: i for i, op in enumerate(OPERATIONS)}, {m: i for i, m in enumerate(METHODS)}
    rows = []
    for (system, partition, environ, op, method), g in ours.groupby(
            ["system", "partition", "environ", "op", "method"], dropna=False):
        span = g.groupby("test")["size"].agg(["max", "nunique"]).sort_values(["max", "nunique"])
        test = span.index[-1]
        by_size = g[g["test"] == test].groupby("size")[["time_us", "goodput_GBps"]].median()
        top = int(by_size.index.max())
        label = size_label(top)
        at = dict(system=system, partition=partition, op=op, method=method)

        def where(df, _at=at, **extra):
            if df is None or df.empty:
                return df
            keep = pd.Series(True, index=df.index)
            for col, value in {**_at, **extra}.items():
                keep &= df[col] == value
            return df[keep]

        native = _ratios(where(native_t, size=top), "tool", "goodput_ratio") or \
            _ratios(where(native_p, test=test, var=f"goodput_{label}"), "tool", "ratio")
        paper = where(paper_t, size=top)
        paper = _ratios(paper[paper["comparable"].astype(bool)], "paper_system", "ratio") if len(paper) else ""
        ref = comparison[(comparison[CASE_KEY[:4]] == [system, partition, environ, test]).all(axis=1)
                         & comparison["var"].isin([f"goodput_{label}", f"{method}_goodput_{label}"])] \
            if len(comparison) else comparison
        ref = ref[pd.to_numeric(ref["ref"], errors="coerce").fillna(0) != 0] if len(ref) else ref
        vs_ref = ""
        if len(ref):
            row = ref.iloc[0]
            vs_ref = f"{row['value'] / row['ref']:.2f}" + (" (outside)" if row["status"] == "ref-fail" else "")
        rows.append({"system:partition": f"{system}:{partition}", "op": op, "method": method, "environ": environ,
                     "8 B latency (us)": by_size["time_us"].get(8), "largest size": label,
                     "goodput (GB/s)": by_size["goodput_GBps"].get(top), "vs native tool": native,
                     "vs paper": paper, "vs reference": vs_ref,
                     "_o": (system, partition, op_order.get(op, 99), op, method_order[method], str(environ))})
    out = pd.DataFrame(rows).sort_values("_o").drop(columns="_o")
    if out["environ"].nunique() <= 1:
        out = out.drop(columns="environ")
    return out.reset_index(drop=True)


def _ref_text(row):
    if pd.isna(row["ref"]):
        return ""
    lo = f"{row['ref'] * (1 + row['lower']):.4g}" if pd.notna(row["lower"]) else "-inf"
    hi = f"{row['ref'] * (1 + row['upper']):.4g}" if pd.notna(row["upper"]) else "inf"
    return f" [{lo}, {hi}] {row['unit']}"


#: more perf values than this (a batch of nodes): the page shows the trend summarised per
#: variable (trend_summary) and only the flagged values one per row; trend.csv has every one
TREND_ROWS_MAX = 500
#: the trend's statuses that the folded page still lists one row each
FINDINGS = ("ref-fail", *FLAGGED)


def trend_summary(comparison: pd.DataFrame) -> pd.DataFrame:
    """The trend of many nodes in one row per partition, environment, check, variable and status:
    how many test cases and nodes, and the values' spread (min, 5 %, median, 95 %, max) and the
    changes' median; the per-node rows are in trend.csv."""
    cols = ["system", "partition", "environ", "test", "var", "unit", "status", "cases", "nodes", "min", "p05",
            "median", "p95", "max", "median change"]
    if comparison.empty:
        return pd.DataFrame(columns=cols)
    key = ["system", "partition", "environ", "test", "var", "unit", "status"]
    g = comparison.assign(status=comparison["status"].astype(str)).groupby(key, dropna=False, sort=False)
    values = g["value"]
    out = pd.DataFrame({"cases": g.size(), "nodes": g["nodes"].nunique(), "min": values.min(),
                        "p05": values.quantile(0.05), "median": values.median(), "p95": values.quantile(0.95),
                        "max": values.max(), "median change": g["change"].median()}).reset_index()
    order = {s: i for i, s in enumerate(FINDINGS)}
    out = out.assign(_o=out["status"].map(order).fillna(len(order)))
    return out.sort_values(["_o", "system", "partition", "environ", "test", "var"]).drop(columns="_o")[cols]
