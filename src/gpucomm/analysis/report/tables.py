"""The report's tables: this run's sweeps, this run vs the paper, vs native tools, vs earlier runs,
and the per-node health summary."""

import fnmatch

import pandas as pd

from ...constants import METHODS, PAPER_METHOD
from ...sizes import size_label
from .inputs import CASE_KEY

#: our method -> the paper CSV's method (ipc-copy is the paper's device_copy, host its host_mpi)
PAPER_METHODS = PAPER_METHOD
#: our operation -> the paper CSV's operation (multi ping-pong is the paper's inter-node ping-pong)
PAPER_OPS = {"pingpong": "pingpong", "multi-pingpong": "pingpong", "allreduce": "allreduce",
             "alltoall": "alltoall"}
#: native tool (any method that is not one of ours) -> our methods it is compared with;
#: a tool not listed here is compared with every method that measured the same op and size
NATIVE_PAIRS = {"nccl-tests": ("ccl",), "nccl-tests-g": ("ccl",), "rccl-tests": ("ccl",),
                "rccl-tests-g": ("ccl",), "osu": ("gpu-aware-mpi",), "osu-host": ("host",),
                "osu-xccl": ("ccl",)}
PAPER_COLUMNS = {"system", "scope", "operation", "method", "gpu_pair", "nodes", "ranks", "size_bytes",
                 "goodput_gbps_mean", "goodput_gbps_median", "source_figure"}
GOOD_RESULTS = ("pass", "skip", "xfail")


def newest(df, key, history_col="history"):
    """Rows of the newest run per ``key`` among the non-history rows (column 'run_time' or 'time')."""
    if df.empty:
        return df
    when = "run_time" if "run_time" in df else "time"
    cur = df[~df[history_col].astype(bool)]
    last = cur.groupby(key, dropna=False)[when].transform("max")
    return cur[(cur[when] == last) | last.isna()]


def current_sweeps(sweeps):
    cur = newest(sweeps, CASE_KEY)
    return cur.sort_values(["system", "partition", "op", "method", "pair", "size"], na_position="first")


def load_paper(path):
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


def vs_paper(cur, paper, mapping=(), stat="median"):
    """This run's goodput against the paper's at every point both have: ratio = ours / paper."""
    cols = ["system", "partition", "op", "method", "pair", "size", "size_label", "nranks", "nodes",
            "goodput_GBps", "paper_system", "paper_figure", "paper_ranks", "paper_pair",
            "paper_GBps", "ratio"]
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
    return m[cols].sort_values(["system", "partition", "op", "method", "size", "paper_system"])


def paper_pivot(table):
    """One row per (partition, op, method, size): ours, then paper GB/s and ratio per paper system."""
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


def rank_note(table):
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


def sweep_pivot(cur):
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


def vs_native(cur):
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


def parse_tolerances(items, default=0.10):
    """['0.2', 'latency_*=0.3'] -> (default, [(pattern, fraction)]); percentages ('20%') too."""
    patterns = []
    for item in items or []:
        pattern, _, value = item.rpartition("=")
        value = value.strip()
        frac = float(value[:-1]) / 100 if value.endswith("%") else float(value)
        if frac < 0:
            raise ValueError(f"tolerance {item!r} is negative")
        if pattern:
            patterns.append((pattern, frac))
        else:
            default = frac
    return default, patterns


def lower_is_better(var, unit):
    return (str(unit) in ("us", "ms", "s", "ns") or str(var).startswith(("latency", "time"))
            or "_slowdown_" in str(var) or "_spread_" in str(var))  # the noise check's ratios


def compare(perf, cases, tolerances=(0.10, ()), window=5):
    """This run's perf variables against the median of up to ``window`` earlier runs of the same
    test case; status: regressed / improved (moved beyond the tolerance), ok, new (no history),
    ref-fail (ReFrame's own reference check failed)."""
    cols = CASE_KEY + ["nodes", "var", "unit", "value", "baseline", "runs", "change", "tolerance", "status",
                       "time"]
    cur_cases = newest(cases, CASE_KEY)
    if perf.empty or cur_cases.empty:
        return pd.DataFrame(columns=cols)
    cur = perf.merge(cur_cases[CASE_KEY + ["time"]], on=CASE_KEY + ["time"])
    cur = cur.drop_duplicates(CASE_KEY + ["var"], keep="last")
    hist = perf[["var", "value", "time"] + CASE_KEY].rename(columns={"value": "old", "time": "old_time"})
    m = cur[CASE_KEY + ["var", "time"]].merge(hist, on=CASE_KEY + ["var"])
    m = m[m["old_time"] < m["time"] - 1].sort_values("old_time")
    base = m.groupby(CASE_KEY + ["var"]).tail(window).groupby(CASE_KEY + ["var"])["old"] \
        .agg(baseline="median", runs="size").reset_index()
    cur = cur.merge(base, on=CASE_KEY + ["var"], how="left")
    cur["runs"] = cur["runs"].fillna(0).astype(int)
    default, patterns = tolerances
    cur["tolerance"] = [next((f for p, f in patterns if fnmatch.fnmatch(v, p)), default) for v in cur["var"]]
    cur["change"] = cur["value"] / cur["baseline"] - 1
    worse = [(c > t if lower_is_better(v, u) else c < -t) for c, t, v, u in
             zip(cur["change"], cur["tolerance"], cur["var"], cur["unit"])]
    moved = cur["change"].abs() > cur["tolerance"]
    cur["status"] = "ok"
    cur.loc[cur["baseline"].isna(), "status"] = "new"
    cur.loc[moved & ~pd.Series(worse, index=cur.index), "status"] = "improved"
    cur.loc[moved & pd.Series(worse, index=cur.index), "status"] = "regressed"
    cur.loc[cur["var_result"].astype(str) == "fail", "status"] = "ref-fail"
    first = {"regressed": 0, "ref-fail": 0, "improved": 1}  # flagged rows on top
    cur = cur.assign(_o=cur["status"].map(first).fillna(2)).sort_values(["_o"] + CASE_KEY + ["var"])
    return cur[cols].reset_index(drop=True)


def _fmt(value, unit):
    return f"{value:.4g} {unit}" if pd.notna(value) else "n/a"


def health(cases, comparison, tolerances=(0.10, ()), window=5):
    """Plain text for a cron mail: one PASS/FAIL line per node, the failing checks below it."""
    cur = newest(cases, CASE_KEY)
    if cur.empty:
        return "gpucomm health: UNKNOWN (no ReFrame test case results found)\n"
    bad = comparison[comparison["status"].isin(["regressed", "ref-fail"])]
    skipped = int((cur["result"] == "skip").sum())  # never ran on a node
    per_node = {}
    for _, case in cur[cur["result"] != "skip"].iterrows():
        why = []
        if str(case["result"]) not in GOOD_RESULTS:
            phase = f" in {case['fail_phase']}" if pd.notna(case["fail_phase"]) else ""
            reason = f": {case['fail_reason']}" if pd.notna(case["fail_reason"]) else ""
            why.append(f"{case['result']}{phase}{reason}")
        for _, row in bad[(bad[CASE_KEY] == case[CASE_KEY]).all(axis=1)].iterrows():
            if row["status"] == "ref-fail":
                why.append(f"{row['var']} = {_fmt(row['value'], row['unit'])} outside its ReFrame reference")
            else:
                why.append(f"{row['var']} = {_fmt(row['value'], row['unit'])}, {row['change']:+.0%} vs "
                           f"{_fmt(row['baseline'], row['unit'])} (median of {row['runs']} earlier runs; "
                           f"tolerance {row['tolerance']:.0%})")
        for node in str(case["nodes"]).split(","):
            entry = per_node.setdefault((node, f"{case['system']}:{case['partition']}"), [0, []])
            entry[0] += 1
            entry[1] += [f"{case['test']} [{case['environ']}]: {w}" for w in why]
    failing = sum(1 for n, (_, w) in per_node.items() if w)
    when = pd.to_datetime(cur["time"].max(), unit="s", utc=True)
    when = "an unknown time" if pd.isna(when) else when.strftime("%Y-%m-%d %H:%M UTC")
    default, patterns = tolerances
    tol = f"{default:.0%}" + "".join(f", {p} {f:.0%}" for p, f in patterns)
    lines = [f"gpucomm health: {'FAIL' if failing else 'PASS'} ({failing} of {len(per_node)} nodes failing), "
             f"run of {when}; tolerance {tol} vs the median of up to {window} earlier runs"
             + (f"; {skipped} test cases skipped" if skipped else "")]
    for (node, where), (n, why) in sorted(per_node.items()):
        lines.append(f"{'FAIL' if why else 'PASS'}  {node}  {where}  {n} test cases"
                     + (f", {len(why)} problems" if why else ""))
        lines += [f"      {w}" for w in why]
    return "\n".join(lines) + "\n"
