"""Reading what ReFrame leaves behind into three pandas tables.

* ``sweeps``: one row per size of a payload sweep (``gpucomm_results.json``, or the
  ``GPUCOMM-RESULT`` lines of ``rfm_job.out`` where that file is missing or broken);
* ``cases``: one row per test case run (ReFrame JSON run reports, results databases, perflogs);
* ``perf``: one row per perf variable of a test case run.

Every problem with an input becomes one line in ``Inputs.problems``; nothing here raises for bad
input.
"""

import json
import os
import re
import sqlite3
from dataclasses import dataclass, field

import pandas as pd

from ...contract import NOISE_FILES, RESULT_TAG, RESULTS_FILE, STDOUT_FILE

CASE_KEY = ["system", "partition", "environ", "test"]
_PERFLOG_RE = re.compile(r".*\.log(\.h\d+)?$")
_RFM3_LINE = re.compile(r"^[^|]*\|reframe [^|]*\|[^|]* on [^|]*\|")


@dataclass
class Inputs:
    sweeps: list = field(default_factory=list)   # DataFrames, concatenated by frames()
    cases: list = field(default_factory=list)
    perf: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    files: list = field(default_factory=list)    # (path, kind, note)

    def frames(self):
        """(sweeps, cases, perf) as DataFrames; duplicates (same run read twice) dropped."""
        sweeps = _concat(self.sweeps, SWEEP_COLUMNS)
        sweeps = sweeps.drop_duplicates(CASE_KEY + ["op", "method", "pair", "size", "run_time"])
        cases = _concat(self.cases, CASE_COLUMNS)
        perf = _concat(self.perf, PERF_COLUMNS)
        # a report and a perflog of the same run: keep the report's row (listed first)
        for df in (cases, perf):
            df["time"] = pd.to_numeric(df["time"], errors="coerce")
            df["_t"] = df["time"].round(0)
        rank = {"report": 0, "database": 1, "perflog": 2}
        cases = cases.sort_values("kind", key=lambda k: k.map(rank), kind="stable")
        perf = perf.sort_values("kind", key=lambda k: k.map(rank), kind="stable")
        cases = cases.drop_duplicates(CASE_KEY + ["_t"])
        perf = perf.drop_duplicates(CASE_KEY + ["var", "_t"])
        return sweeps.reset_index(drop=True), cases.drop(columns="_t").reset_index(drop=True), \
            perf.drop(columns="_t").reset_index(drop=True)


SWEEP_COLUMNS = ["system", "partition", "environ", "test", "op", "method", "pair", "size", "nranks",
                 "nodes", "time_us", "time_us_p05", "time_us_p95", "time_us_mean", "goodput_GBps",
                 "busbw_GBps", "goodput_GBps_best", "validated", "nominal_GBps", "nominal_source",
                 "device_name", "run_time", "history", "source"]
CASE_COLUMNS = ["time", "session", "system", "partition", "environ", "test", "nodes", "result",
                "fail_phase", "fail_reason", "history", "kind", "source"]
PERF_COLUMNS = ["time", "session", "system", "partition", "environ", "test", "nodes", "var", "value",
                "unit", "ref", "lower", "upper", "var_result", "result", "history", "kind", "source"]


def _concat(frames, columns):
    frames = [f for f in frames if len(f)]
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return df.reindex(columns=columns)


def discover(paths, quiet_missing=False):
    """Files to read under ``paths`` (files or folders) and problems with the paths themselves."""
    found, problems = [], []
    for path in paths:
        if os.path.isfile(path):
            found.append((path, True))
        elif os.path.isdir(path):
            before = len(found)
            for root, dirs, files in os.walk(path):
                dirs.sort()
                names = set(files)
                for name in sorted(files):
                    full = os.path.join(root, name)
                    if name.endswith((".json", ".db", ".sqlite")) or _PERFLOG_RE.match(name):
                        found.append((full, False))
                    elif name == STDOUT_FILE and not names & {RESULTS_FILE, *NOISE_FILES.values()}:
                        found.append((full, False))  # the payload's stdout where its JSON is missing
            if len(found) == before:
                problems.append(f"{path}: no ReFrame report, perflog or {RESULTS_FILE} in this folder")
        elif not quiet_missing:
            problems.append(f"{path}: no such file or folder")
    return found, problems


def load(paths, history_paths=(), progress=None):
    """Read every input; ``progress(i, n, path)`` is called before each file."""
    data = Inputs()
    todo = []
    for group, is_history in ((paths, False), (history_paths, True)):
        found, problems = discover(group)
        data.problems += problems
        todo += [(p, explicit, is_history) for p, explicit in found]
    for i, (path, explicit, is_history) in enumerate(todo, 1):
        if progress:
            progress(i, len(todo), path)
        try:
            kind, note = _read_file(data, path, explicit, is_history)
        except Exception as exc:  # noqa: BLE001 - bad input must never stop the report
            kind, note = "error", f"could not be read ({type(exc).__name__}: {exc})"
            data.problems.append(f"{path}: {note}")
        data.files.append((path, kind, note))
    return data


def _read_file(data, path, explicit, history):
    name = os.path.basename(path)
    if os.path.getsize(path) == 0:
        return _problem(data, path, "empty file: skipped")
    if name.endswith((".db", ".sqlite")):
        return _read_db(data, path, history)
    if name == STDOUT_FILE:
        return _read_stdout(data, path, history, why=f"no {RESULTS_FILE} next to it")
    if _PERFLOG_RE.match(name):
        return _read_perflog(data, path, explicit, history)
    with open(path, errors="replace") as fp:
        text = fp.read()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        msg = f"truncated or invalid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        stdout = os.path.join(os.path.dirname(path), STDOUT_FILE)
        if name == RESULTS_FILE and os.path.exists(stdout):
            return _read_stdout(data, stdout, history, why=f"{path}: {msg}")
        return _problem(data, path, msg + ": skipped")
    if isinstance(doc, dict) and "session_info" in doc and "runs" in doc:
        return _read_report(data, doc, path, history, "report")
    if isinstance(doc, dict) and isinstance(doc.get("results"), list) and "meta" in doc:
        return _read_sweep(data, doc["meta"] or {}, doc["results"], path, history)
    if explicit:
        return _problem(data, path, "neither a ReFrame run report nor a gpucomm results file: skipped")
    return "ignored", "other JSON"


def _problem(data, path, msg):
    data.problems.append(f"{path}: {msg}")
    return "problem", msg


def _case_location(path):
    """(system, partition, environ, test) from .../<system>/<partition>/<environ>/<test>/<file>."""
    parts = os.path.normpath(os.path.abspath(path)).split(os.sep)[-5:-1]
    return parts if len(parts) == 4 else ["?", "?", "?", os.path.basename(os.path.dirname(path))]


def _pair_label(pair):
    if pair is None or (isinstance(pair, float) and pd.isna(pair)):
        return None
    if isinstance(pair, dict):
        pair = [pair.get("src", pair.get("a")), pair.get("dst", pair.get("b"))]
    if isinstance(pair, (list, tuple)):
        return "-".join(str(p) for p in pair)
    return "-".join(re.findall(r"\w+", str(pair))) or str(pair)


def _read_sweep(data, meta, records, path, history):
    records = [r for r in records if isinstance(r, dict) and "size" in r]
    if not records:
        return _problem(data, path, "no per-size records: skipped")
    df = pd.json_normalize(records)
    system, partition, environ, test = _case_location(path)
    out = pd.DataFrame({
        "system": system, "partition": partition, "environ": environ, "test": test,
        "op": df.get("op", meta.get("op")), "method": df.get("method", meta.get("method")),
        "pair": df["pair"].map(_pair_label) if "pair" in df else None,
        "size": pd.to_numeric(df["size"], errors="coerce"),
        "nranks": df.get("nranks", meta.get("nranks")), "nodes": meta.get("nodes", 1),
        "time_us": df.get("time_us.median"), "time_us_p05": df.get("time_us.p05"),
        "time_us_p95": df.get("time_us.p95"), "time_us_mean": df.get("time_us.mean"),
        "goodput_GBps": df.get("goodput_GBps"), "busbw_GBps": df.get("busbw_GBps"),
        "goodput_GBps_best": df.get("goodput_GBps_best"), "validated": df.get("validated"),
        "nominal_GBps": meta.get("nominal_GBps"), "nominal_source": meta.get("nominal_source"),
        "device_name": meta.get("device_name"),
        "run_time": pd.to_datetime(meta.get("time"), utc=True, errors="coerce"),
        "history": history, "source": path,
    })
    out[["op", "method"]] = out[["op", "method"]].fillna("?")
    out = out[out["size"] > 0].astype({"size": "int64"})
    if out.empty:
        return _problem(data, path, "no record with a valid size: skipped")
    for col in ("nranks", "nodes", "time_us", "time_us_p05", "time_us_p95", "time_us_mean", "goodput_GBps",
                "busbw_GBps", "goodput_GBps_best", "nominal_GBps"):
        out[col] = pd.to_numeric(out[col], errors="coerce")
    data.sweeps.append(out.reindex(columns=SWEEP_COLUMNS))
    return "sweep", f"{len(out)} sizes of {out['op'].iloc[0]} {out['method'].iloc[0]}"


def _read_stdout(data, path, history, why):
    records = []
    with open(path, errors="replace") as fp:
        for line in fp:
            if line.startswith(RESULT_TAG + " "):
                try:
                    records.append(json.loads(line[len(RESULT_TAG) + 1:]))
                except json.JSONDecodeError:
                    pass
    if not records:
        return _problem(data, path, f"{why}, and no {RESULT_TAG} lines here either: skipped")
    data.problems.append(f"{why}: used the {len(records)} {RESULT_TAG} lines of {path} instead "
                         "(no nominal limit)")
    meta = {"nodes": 1, "time": pd.Timestamp(os.path.getmtime(path), unit="s", tz="UTC").isoformat()}
    return _read_sweep(data, meta, records, path, history)


def _read_report(data, doc, path, history, kind):
    session = (doc.get("session_info") or {}).get("uuid")
    latest = {}  # a test retried in a later run: its last run counts
    for run in doc.get("runs") or []:
        for tc in (run.get("testcases") or []) if isinstance(run, dict) else []:
            if not isinstance(tc, dict) or not isinstance(tc.get("name"), str) or not tc.get("result"):
                data.problems.append(f"{path}: a test case without a name or result: skipped")
                continue
            key = (tc.get("system"), tc.get("partition"), tc.get("environ"), tc.get("name"))
            latest[key] = tc
    cases, perf = [], []
    for tc in latest.values():
        nodes = ",".join(tc.get("job_nodelist") or []) or "?"
        test = tc.get("name") or tc.get("display_name") or tc.get("short_name")
        case = {"time": tc.get("job_completion_time_unix") or (doc.get("session_info") or {}).get("time_end_unix"),
                "session": session, "system": tc.get("system"), "partition": tc.get("partition"),
                "environ": tc.get("environ"), "test": test, "nodes": nodes, "result": tc.get("result"),
                "fail_phase": tc.get("fail_phase"), "fail_reason": tc.get("fail_reason"),
                "history": history, "kind": kind, "source": path}
        cases.append(case)
        for key, val in (tc.get("perfvalues") or {}).items():
            if not isinstance(val, (list, tuple)) or len(val) < 5:
                continue
            value, ref, lower, upper, unit = val[:5]
            perf.append({**case, "var": key.rsplit(":", 1)[-1], "value": value, "unit": unit,
                         "ref": ref, "lower": lower, "upper": upper,
                         "var_result": val[5] if len(val) > 5 else None})
    if not cases:
        return _problem(data, path, "a ReFrame report without test cases: skipped")
    data.cases.append(pd.DataFrame(cases))
    data.perf.append(_numeric(pd.DataFrame(perf)))
    return kind, f"{len(cases)} test cases, {len(perf)} perf values"


def _numeric(df):
    for col in ("time", "value", "ref", "lower", "upper"):
        if col in df:
            df[col] = pd.to_numeric(df[col], errors="coerce")
    return df


def _read_db(data, path, history):
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            blobs = [row[0] for row in conn.execute("SELECT json_blob FROM sessions")]
    except sqlite3.Error as exc:
        return _problem(data, path, f"not a ReFrame results database ({exc}): skipped")
    n = 0
    for blob in blobs:
        try:
            _read_report(data, json.loads(blob), path, history, "database")
            n += 1
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            data.problems.append(f"{path}: a session could not be decoded ({exc}): skipped")
    return "database", f"{n} sessions"


def _read_perflog(data, path, explicit, history):
    with open(path, errors="replace") as fp:
        lines = [ln.rstrip("\n") for ln in fp if ln.strip()]
    header = lines[0].split("|") if lines else []
    if "job_completion_time" not in header or "result" not in header:
        if lines and _RFM3_LINE.match(lines[0]):
            return _problem(data, path, "perflog in the older one-line-per-variable format of ReFrame 3 "
                            "(no header line): not read; ReFrame 4 perflogs start with a "
                            "'result|job_completion_time|...' header")
        if explicit:
            return _problem(data, path, "not a ReFrame 4 perflog (no 'result|job_completion_time|...' "
                            "header line): skipped")
        return "ignored", "not a perflog"
    rows = [ln.split("|") for ln in lines[1:]]
    good = [r for r in rows if len(r) == len(header)]
    if len(good) < len(rows):
        data.problems.append(f"{path}: {len(rows) - len(good)} of {len(rows)} lines do not match the "
                             "header (written with another perflog format?): skipped")
    if not good:
        return _problem(data, path, "no complete perflog lines") if rows else ("perflog", "header only")
    df = pd.DataFrame(good, columns=header)
    variables = [c[:-6] for c in header if c.endswith("_value") and f"{c[:-6]}_unit" in header]
    col = lambda name, default=None: df[name] if name in df else default  # noqa: E731
    time = pd.to_numeric(col("job_completion_time_unix"), errors="coerce") if "job_completion_time_unix" in df \
        else pd.to_datetime(df["job_completion_time"], utc=True, errors="coerce").astype("int64") / 1e9
    base = pd.DataFrame({
        "time": time, "session": None, "system": col("system", "?"), "partition": col("partition", "?"),
        "environ": col("environ", "?"), "test": col("name", col("short_name", "?")),
        "nodes": col("job_nodelist", "?"), "result": df["result"], "fail_phase": None, "fail_reason": None,
        "history": history, "kind": "perflog", "source": path})
    data.cases.append(base)
    perf = [base.assign(var=v, value=df[f"{v}_value"], unit=df[f"{v}_unit"], ref=col(f"{v}_ref"),
                        lower=col(f"{v}_lower_thres"), upper=col(f"{v}_upper_thres"), var_result=None)
            for v in variables]
    perf = _numeric(pd.concat(perf, ignore_index=True)) if perf else pd.DataFrame()
    if len(perf):
        perf = perf[perf["value"].notna()]
        data.perf.append(perf)
    return "perflog", f"{len(df)} runs, {len(perf)} perf values"
