"""Reading what ReFrame leaves behind into three pandas tables.

* ``sweeps``: one row per size of a payload sweep (``gpucomm_results.json``, or the
  ``GPUCOMM-RESULT`` lines of ``rfm_job.out``, read by ``contract.parse_output``, where that file
  is missing or broken);
* ``cases``: one row per test case run (ReFrame JSON run reports, sessions of ReFrame's results
  storage, perflogs);
* ``perf``: one row per perf variable of a test case run;
* ``sessions``: one row per ReFrame session read (its uuid, whether it was a ``--dry-run``).

System, partition, environment and test name always come from ReFrame's own records (the test
cases of a report or a stored session, a perflog's fields); a payload results file takes them from
the test case whose output folder it sits in, never from folder names.

Every problem with an input becomes one line in ``Inputs.problems``; nothing here raises for bad
input.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..constants import ALL_SESSIONS
from ..contract import (
    NODE_CHECK_SEP,
    NODE_CHECKS_FIELD,
    NOISE_FILES,
    PAIRS_FIELD,
    PER_RUN_ENV,
    PREC_CI,
    PREC_P10,
    PREC_REL_SE,
    PREC_SAMPLES,
    PREC_STOPPED,
    PRECISION_FIELD,
    RESULT_TAG,
    RESULTS_FILE,
    STATUS_FAIL,
    STATUS_NO_RESULT,
    STATUS_PASS,
    STATUS_SKIP,
    STDOUT_FILE,
    parse_output,
)

#: a test case within a session: its check (``test``, ReFrame's name) and its variant (``case``,
#: ReFrame's display_name: one per node of ``--distribute`` and per ``--repeat``)
CASE_KEY = ["system", "partition", "environ", "test", "case"]
#: the parameters ReFrame's test generators add to a display name (--distribute, --repeat)
_GENERATED = re.compile(r"\s+%\.(?P<key>part|nid|repeat_no)=(?P<value>\S+)")
_PERFLOG_RE = re.compile(r".*\.log(\.h\d+)?$")
_RFM3_LINE = re.compile(r"^[^|]*\|reframe [^|]*\|[^|]* on [^|]*\|")


@dataclass
class Inputs:
    sweeps: list = field(default_factory=list)   # DataFrames, concatenated by frames()
    cases: list = field(default_factory=list)
    perf: list = field(default_factory=list)
    #: a report's perf values as (position of its cases frame in ``cases``, its rows' own columns
    #: with ``_at``, each row's test case in that frame): frames() joins them once
    perf_rows: list = field(default_factory=list)
    sessions: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    files: list = field(default_factory=list)    # (path, kind, note)
    #: {(source, case): a node pair matrix's every pair (contract.PAIRS_FIELD)}: read by the
    #: verdict (gpucomm acceptance), not a frame (3 million pairs at 1,024 nodes)
    pair_values: dict = field(default_factory=dict)

    def frames(self) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        """(sweeps, cases, perf) as DataFrames; duplicates (same run read twice) dropped.  The
        per-file frames are replaced by the three (a week of 1,024-node nights: 1.2 million perf
        rows, each copy of them 0.3 GB)."""
        sweeps = _concat(self.sweeps, SWEEP_COLUMNS)
        sweeps = sweeps.drop_duplicates(CASE_KEY + ["op", "method", "pair", "size", "run_time"])
        starts = np.cumsum([0] + [len(f) for f in self.cases])
        cases = _timed(_concat(self.cases, CASE_COLUMNS))
        joined = _joined(cases, [(f, starts[i]) for i, f in self.perf_rows])
        self.sweeps, self.cases, self.perf_rows = [], [], []
        perf = _concat([joined, *map(_timed, self.perf)], PERF_COLUMNS + ["_t"])
        del joined
        self.perf = []
        # a report and a perflog of the same run: keep the report's row (listed first)
        rank = {"report": 0, "database": 1, "perflog": 2}
        if cases["kind"].nunique() > 1 or perf["kind"].nunique() > 1:  # (a copy of 1.2 million rows)
            cases = cases.sort_values("kind", key=lambda k: k.map(rank), kind="stable")
            perf = perf.sort_values("kind", key=lambda k: k.map(rank), kind="stable")
        cases = _one_per_run(cases, CASE_KEY)
        perf = _one_per_run(perf, CASE_KEY + ["var"])
        sweeps = sweeps.reset_index(drop=True)
        cases = cases.drop(columns="_t").reset_index(drop=True)
        perf = perf.drop(columns="_t").reset_index(drop=True)
        self.sweeps, self.cases, self.perf = [sweeps], [cases], [perf]
        release_freed_memory()
        return sweeps, cases, perf

    def sessions_frame(self) -> pd.DataFrame:
        """One row per ReFrame session read (a session read twice, from a report and storage: once)."""
        df = _concat(self.sessions, SESSION_COLUMNS)
        df["time"] = pd.to_numeric(df["time"], errors="coerce")
        return df.drop_duplicates(["session", "history"]).reset_index(drop=True)


def _one_per_run(df, key):
    """The rows of ``df`` (sorted report first) once per run: rows of one session once; a row
    without a session (a perflog line) only where no row with one has its key and second.  Two
    sessions ending in the same second stay two runs (rounding alone merged them: a flaky
    history in tests/rfm/test_report_storage.py)."""
    with_session = df["session"].notna()
    if with_session.all():  # reports and stored sessions only: no copy where no row is twice
        twice = df.duplicated(key + ["session", "_t"])
        return df[~twice] if twice.any() else df
    keyed = df[with_session].drop_duplicates(key + ["session", "_t"])
    loose = df[df["session"].isna()].drop_duplicates(key + ["_t"])
    seen = keyed[key + ["_t"]].drop_duplicates()
    loose = loose.merge(seen, on=key + ["_t"], how="left", indicator=True)
    loose = loose[loose["_merge"] == "left_only"].drop(columns="_merge")
    return pd.concat([keyed, loose], ignore_index=True) if not loose.empty else keyed


SWEEP_COLUMNS = ["system", "partition", "environ", "test", "case", "op", "method", "pair", "size", "nranks",
                 "nodes", "time_us", "time_us_p05", "time_us_p95", "time_us_mean", "goodput_GBps",
                 "busbw_GBps", "goodput_GBps_best", "validated", "nominal_GBps", "nominal_source",
                 "device_name", "run_time", "session", "history", "source", "folder"]
CASE_COLUMNS = ["time", "session", "system", "partition", "environ", "test", "case", "node", "repeat", "nodes",
                "result", "software", "retried",
                "fail_phase", "fail_reason", "dry_run", "outputdir", "op", "method", "tool", "nranks",
                "history", "kind", "source"]
SESSION_COLUMNS = ["session", "time", "dry_run", "num_cases", "num_failures", "num_skipped", "cmdline",
                   "history", "kind", "source"]
#: a location ReFrame did not name (a results file outside every report's test cases)
UNKNOWN = "unknown"
#: the perf frame's columns of a value's own precision (contract.PRECISION_FIELD; None/NaN: unknown):
#: rel_se, the standard error of log(value) (the verdicts' within-run noise); the median's 95 %
#: interval (ci_low, ci_high) and p10 in the variable's unit; the timed samples; why sampling stopped
PRECISION_COLUMNS = ("rel_se", "ci_low", "ci_high", "p10", "samples", "stopped")
PERF_COLUMNS = ["time", "session", "system", "partition", "environ", "test", "case", "node", "repeat", "nodes",
                "software", "var", "value",
                "unit", "ref", "lower", "upper", "var_result", "result", "op", "method", "tool", "nranks",
                "history", "kind", "source", "fail_phase", *PRECISION_COLUMNS]


def _concat(frames, columns):
    frames = [f for f in frames if len(f)]
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return df.reindex(columns=columns)


def _timed(df):
    """``df`` with its time a number and ``_t``, the time to the second (one run's rows in a
    report and in a perflog)."""
    time = pd.to_numeric(df["time"], errors="coerce") if "time" in df else pd.Series(np.nan, index=df.index)
    return df.assign(time=time, _t=time.round(0))


def _joined(cases, parts):
    """The perf frame of the reports' values: each row of ``parts`` ((own columns with ``_at``,
    the row of ``cases`` where its report's cases start)) with its test case's columns, built at
    once (a week of 1,024-node nights: 1.2 million rows, 0.3 GB a copy)."""
    parts = [(f, start) for f, start in parts if len(f)]
    if not parts:
        return pd.DataFrame()
    own = pd.concat([f.assign(_at=f["_at"] + start) for f, start in parts], ignore_index=True)
    at = own.pop("_at").to_numpy(dtype=int)
    keep = [c for c in cases.columns if c in PERF_COLUMNS or c == "_t"]
    return pd.concat([cases[keep].take(at).reset_index(drop=True), own], axis=1)


def discover(paths: Iterable[str], quiet_missing: bool = False) -> tuple[list[tuple[str, bool]], list[str]]:
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


def load(paths: Iterable[str], history_paths: Iterable[str] = (),
         progress: Callable[[int, int, str], object] | None = None) -> Inputs:
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
    locate_sweeps(data)
    return data


def release_freed_memory() -> None:
    """Give the C heap's freed pages back to the system (glibc's malloc_trim; elsewhere nothing).
    A report's JSON parses into many small objects that glibc keeps after they are freed: after
    a week of 1,024-node nights read into frames, 0.44 GB of the report's 0.99 GB were such pages."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def locate_sweeps(data: Inputs) -> None:
    """System, partition, environment and test of every results file, from the ReFrame test case
    whose output folder holds it (the nearest in time where several runs used that folder); a
    file no test case names stays 'unknown' (one line says so)."""
    frames = [c for c in data.cases if len(c) and "outputdir" in c]
    cases = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=CASE_COLUMNS)
    cases = cases[cases["outputdir"].notna()]
    folders = cases.assign(folder=cases["outputdir"].map(lambda d: os.path.basename(os.path.normpath(str(d)))))
    unknown = []
    for i, sweep in enumerate(data.sweeps):
        match = folders[folders["folder"] == sweep["folder"].iloc[0]]
        if match.empty:
            unknown.append(sweep["source"].iloc[0])
            continue
        when = sweep["run_time"].iloc[0]
        when = when.timestamp() if pd.notna(when) else float("nan")
        delta = (pd.to_numeric(match["time"], errors="coerce") - when).abs()
        case = match.loc[delta.idxmin()] if delta.notna().any() else match.iloc[-1]
        data.sweeps[i] = sweep.assign(system=case["system"], partition=case["partition"],
                                      environ=case["environ"], test=case["test"], case=case["case"],
                                      session=case["session"])
    if unknown:
        data.problems.append(f"{len(unknown)} results files in no ReFrame test case's output folder (no report, "
                             f"stored session or perflog of their run among the inputs): system and partition "
                             f"unknown, e.g. {unknown[0]}")


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
    folder = os.path.basename(os.path.dirname(os.path.abspath(path)))
    # located by locate_sweeps() from the test case whose output folder this is
    out = pd.DataFrame({
        "system": UNKNOWN, "partition": UNKNOWN, "environ": UNKNOWN, "test": folder, "case": folder,
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
        "history": history, "source": path, "folder": folder,
    })
    out[["op", "method"]] = out[["op", "method"]].fillna("?")
    out = _valid_records(data, path, df, out)
    if out.empty:
        return _problem(data, path, "no record with a valid size: skipped")
    for col in ("nranks", "nodes", "time_us", "time_us_p05", "time_us_p95", "time_us_mean", "goodput_GBps",
                "busbw_GBps", "goodput_GBps_best", "nominal_GBps"):
        out[col] = pd.to_numeric(out[col], errors="coerce")
    data.sweeps.append(out.reindex(columns=SWEEP_COLUMNS))
    return "sweep", f"{len(out)} sizes of {out['op'].iloc[0]} {out['method'].iloc[0]}"


def _valid_records(data, path, df, out):
    """``out`` less its records whose size is not a positive number (-8, 'abc') or whose median
    time is not a positive finite number (0, -1, NaN: a goodput divided by it), said in one
    problem line (old: dropped or plotted silently, numpy's "divide by zero" warning printed)."""
    size_ok = out["size"] > 0
    time_ok = pd.Series(True, index=out.index)
    if "time_us.median" in df:
        times = pd.to_numeric(out["time_us"], errors="coerce")
        time_ok = times.gt(0) & times.lt(float("inf"))
    keep = size_ok & time_ok
    if not keep.all():
        sizes = [repr(v) for v in df.loc[~size_ok, "size"].tolist()[:3]]
        times = [repr(v) for v in df.loc[size_ok & ~time_ok, "time_us.median"].tolist()[:3]] if (~time_ok).any() else []
        what = ([f"size {', '.join(sizes)}"] if sizes else []) + ([f"time {', '.join(times)}"] if times else [])
        data.problems.append(f"{path}: {int((~keep).sum())} record(s) left out, not a positive number "
                             f"({'; '.join(what)})")
    return out[keep].astype({"size": "int64"})


def _read_stdout(data, path, history, why):
    """The records of a job's stdout (contract.parse_output), where its results file is not usable
    (``why``)."""
    records = []
    with open(path, errors="replace") as fp:
        for line in fp:
            try:  # line by line: a line cut short (a job killed mid-write) loses only itself
                records += parse_output(line)[0]
            except json.JSONDecodeError:
                pass
    if not records:
        return _problem(data, path, f"{why}, and no {RESULT_TAG} lines here either: skipped")
    data.problems.append(f"{why}: used the {len(records)} {RESULT_TAG} lines of {path} instead "
                         "(no nominal limit)")
    meta = {"nodes": 1, "time": pd.Timestamp(os.path.getmtime(path), unit="s", tz="UTC").isoformat()}
    return _read_sweep(data, meta, records, path, history)


def is_dry_run(session_info: dict[str, Any] | None, testcases: list[dict[str, Any]]) -> bool:
    """Whether a ReFrame session was a ``--dry-run``: its command line says so, or none of its test
    cases that were not skipped ran a job (a dry run "passes" every test case without a job id,
    completion time or performance value)."""
    cmdline = (session_info or {}).get("cmdline") or ""
    try:
        words = shlex.split(cmdline)
    except ValueError:
        words = cmdline.split()
    if any(w == "--dry-run" or (w.startswith("--dry") and "--dry-run".startswith(w)) for w in words):
        return True
    ran = [tc for tc in testcases if tc.get("result") != "skip"]
    return bool(ran) and all(tc.get("result") == "pass" and not tc.get("jobid")
                             and tc.get("job_completion_time_unix") is None
                             and all(not isinstance(v, (list, tuple)) or v[0] is None
                                     for v in (tc.get("perfvalues") or {}).values())
                             for tc in ran)


def tool_label(tc: dict[str, Any]) -> str | None:
    """A native check's tool as the report names it beside our methods (the label its results
    files carry: checks/native.py method_label), from the test case's variables; None for ours."""
    tool = tc.get("tool")
    if not tool:
        return None
    if tool == "osu":
        if str(tc.get("bench") or "").startswith("osu_xccl"):
            return "osu-xccl"
        return "osu-host" if tc.get("buffers") == "host" else "osu"
    if tool == "nccl-tests":
        return "nccl-tests-g" if tc.get("mode") == "single" else "nccl-tests"
    return str(tool)


#: the result of a test case whose report says none (a failure to the verdict)
NO_RESULT = "no result"


def real_nodes(nodelist: Sequence[Any] | None) -> list[str]:
    """The node names of a test case's ``job_nodelist``, without the placeholder ReFrame records
    for a job whose nodes it never saw ('None')."""
    return [str(n) for n in (nodelist or []) if n and str(n) != "None"]


def case_identity(display_name: str | None, name: str | None = None, nodelist: Sequence[str] = ()
                  ) -> tuple[str, str, str | None, int]:
    """(test, case, node, repeat) of a test case: ``test`` its check's name without the parameters
    ReFrame's ``--distribute`` and ``--repeat`` add, ``case`` the whole display name (unique in a
    session), ``node`` the one node it ran on (``%.nid=``, else a one-node job's node list; None for
    a job of several nodes or none), ``repeat`` its ``--repeat`` number (0 without one)."""
    shown = str(display_name or name or "?")
    found = {m.group("key"): m.group("value") for m in _GENERATED.finditer(shown)}
    test = str(name) if name else _GENERATED.sub("", shown)
    nodes = real_nodes(nodelist)
    node = found.get("nid") or (nodes[0] if len(nodes) == 1 else None)
    try:
        repeat = int(found.get("repeat_no", 0))
    except ValueError:
        repeat = 0
    return test, shown, node, repeat


#: the test case fields read here, with the types ReFrame writes (None: absent)
_FIELD_TYPES = {"display_name": str, "perfvalues": dict, "job_nodelist": list, "result": str}


def report_shape_error(doc: dict[str, Any]) -> str | None:
    """Where a run report holds a field of another type than ReFrame writes, said, or None."""
    for run in doc.get("runs") or []:
        cases = run.get("testcases") if isinstance(run, dict) else None
        if cases is not None and not isinstance(cases, list):
            return f"testcases is {type(cases).__name__}, not a list"
        for tc in cases or []:
            if not isinstance(tc, dict):
                continue
            for name, kind in _FIELD_TYPES.items():
                value = tc.get(name)
                if value is not None and not isinstance(value, kind):
                    return f"test case {tc.get('name')}: {name} is {type(value).__name__}, not {kind.__name__}"
    return None


def database_label() -> str:
    """The results database stored sessions are looked up in, as ReFrame chooses it."""
    if os.environ.get("RFM_SQLITE_DB_FILE"):
        return os.environ["RFM_SQLITE_DB_FILE"]
    if os.environ.get("RFM_CONFIG_FILES"):
        return f"the database of RFM_CONFIG_FILES={os.environ['RFM_CONFIG_FILES']}"
    return ("ReFrame's default database (RFM_CONFIG_FILES is unset: gpucomm's sessions are in the one of "
            "the checkout's config/settings.py; set RFM_CONFIG_FILES to it, or RFM_SQLITE_DB_FILE)")


def software_of(tc: dict[str, Any], reframe_version: object = None) -> str:
    """What a test case's record holds of the software it ran with: its programming environment,
    modules and environment variables (less the per-run ones, contract.PER_RUN_ENV), the versions
    its run recorded (gpucomm, the MPI, the driver: the check's ``software`` field) and ReFrame's
    version.  A change of it starts a new history for the nightly drift verdict."""
    mods = ",".join(str(m) for m in tc.get("modules") or [])
    env = tc["env_vars"] if isinstance(tc.get("env_vars"), dict) else {}
    env = {k: v for k, v in env.items() if k not in PER_RUN_ENV}
    text = f"environ {tc.get('environ')}; modules [{mods}]; env_vars [" + \
        ",".join(f"{k}={v}" for k, v in sorted(env.items())) + "]"
    recorded = tc.get("software")
    if isinstance(recorded, str) and recorded:
        text += f"; {recorded}"
    return text + (f"; reframe {reframe_version}" if reframe_version else "")


def _read_report(data, doc, path, history, kind):
    """A ReFrame run report (or a stored session, ``kind`` "database") into ``data``: (kind, note)."""
    bad = report_shape_error(doc)
    if bad:
        return _problem(data, path, f"{bad}: not a ReFrame run report: skipped")
    info = doc.get("session_info") or {}
    session = info.get("uuid")
    latest = _latest_cases(data, doc, path)
    dry = is_dry_run(info, list(latest.values()))
    end = info.get("time_end_unix") or info.get("time_start_unix")
    data.sessions.append(pd.DataFrame([{
        "session": session, "time": end, "dry_run": dry, "num_cases": len(latest),
        "num_failures": info.get("num_failures"), "num_skipped": info.get("num_skipped"),
        "cmdline": info.get("cmdline"), "history": history, "kind": kind, "source": path}]))
    cases: list[dict[str, Any]] = []
    perf: list[tuple] = []
    for tc in latest.values():
        case = _case_row(tc, session, end, dry, history, kind, path, info.get("version"))
        if isinstance(tc.get(PAIRS_FIELD), dict) and tc[PAIRS_FIELD]:
            data.pair_values[path, case["case"]] = tc[PAIRS_FIELD]
        unfolded = node_job_rows(tc, case)
        if unfolded is None:
            perf += _perf_rows(tc, len(cases))
            cases.append(case)
        else:
            perf += [(len(cases) + at, *rest) for at, *rest in unfolded[1]]
            cases += unfolded[0]
    if not cases:
        data.problems.append(f"{path}: a ReFrame session without test cases (it selected nothing)")
        return kind, "0 test cases"
    case_frame = pd.DataFrame(cases)
    data.cases.append(case_frame)
    own = pd.DataFrame.from_records(perf, columns=["_at", *_PERF_OWN])
    perf = _numbers_only(data, path, _numeric(own), case_frame["test"])
    data.perf_rows.append((len(data.cases) - 1, perf))
    suffix = " (a --dry-run session: nothing was measured)" if dry else ""
    return kind, f"{len(cases)} test cases, {len(perf)} perf values{suffix}"


#: the key under which _latest_cases notes an earlier failed run of a test case ReFrame retried
RETRIED = "_gpucomm_retried"


def _latest_cases(data, doc, path):
    """{(system, partition, environ, display name): test case} of a report, a test retried in a
    later run (ReFrame's --max-retries): its last, with its earlier failures noted (RETRIED: a
    failure that passed on a retry is never a silent pass)."""
    latest: dict[tuple, dict[str, Any]] = {}
    for run in doc.get("runs") or []:
        for tc in (run.get("testcases") or []) if isinstance(run, dict) else []:
            if not isinstance(tc, dict) or not isinstance(tc.get("name"), str):
                data.problems.append(f"{path}: a test case without a name or result: skipped")
                continue
            if not tc.get("result"):  # counts as a failure: a case that ran must say how it ended
                data.problems.append(f"{path}: test case {tc['name']} has no result: counted as failed")
                tc = {**tc, "result": NO_RESULT, "fail_reason": "ReFrame recorded no result for it"}
            key = (tc.get("system"), tc.get("partition"), tc.get("environ"), tc.get("display_name") or tc["name"])
            before = latest.get(key)
            if before is not None:
                earlier = before.get(RETRIED) or _failed_run(before)
                tc = {**tc, RETRIED: earlier} if earlier else tc
            latest[key] = tc
    return latest


def _failed_run(tc):
    """'run N: fail (PHASE: first line of the reason)' of a test case that failed outside its
    performance references, else None."""
    if tc.get("result") in ("pass", "skip", "xfail") or (tc.get("result") == "fail"
                                                         and tc.get("fail_phase") == "performance"):
        return None
    reason = str(tc.get("fail_reason") or "no reason given").strip().splitlines() or [""]
    idx = tc.get("run_index")
    where = f"run {idx}" if idx is not None else "an earlier run"
    return f"{where}: {tc.get('result')} ({tc.get('fail_phase') or '?'}: {reason[0]})"


def _case_row(tc, session, end, dry, history, kind, path, reframe_version=None):
    """The cases row (CASE_COLUMNS) of a report's test case."""
    listed = tc.get("job_nodelist") if isinstance(tc.get("job_nodelist"), list) else []
    test, shown, node, repeat = case_identity(tc.get("display_name"), tc.get("name") or tc.get("short_name"),
                                              listed)
    # ReFrame's Slurm scheduler lists a job it never saw running as ['None']: a --distribute
    # case's own node (%.nid) then names it, not a node "None"
    nodes = ",".join(real_nodes(listed)) or node or "?"
    row = {"time": tc.get("job_completion_time_unix") or end,
            "session": session, "system": tc.get("system"), "partition": tc.get("partition"),
            "environ": tc.get("environ"), "test": test, "case": shown, "node": node, "repeat": repeat,
            "nodes": nodes, "result": tc.get("result"), "software": software_of(tc, reframe_version),
            "retried": tc.get(RETRIED),
            "fail_phase": tc.get("fail_phase"), "fail_reason": tc.get("fail_reason"), "dry_run": dry,
            "outputdir": tc.get("outputdir"), "op": tc.get("op"), "method": tc.get("method"),
            "tool": tool_label(tc), "nranks": tc.get("num_tasks"), "history": history, "kind": kind,
            "source": path}
    return {k: sys.intern(v) if type(v) is str else v for k, v in row.items()}  # _word, inline: 3 M values


#: a node job's inner status word -> (result, fail_phase) of its unfolded test case
_INNER_RESULT = {STATUS_PASS: ("pass", None), STATUS_FAIL: ("fail", "sanity"), STATUS_SKIP: ("skip", None),
                 STATUS_NO_RESULT: (NO_RESULT, "run")}


def node_job_rows(tc, case):
    """(cases, perf) of a per-node acceptance job's test case (rfm.nodejob: its NODE_CHECKS_FIELD),
    unfolded into one test case per inner check on the same node and repeat: its status its result
    (a check that failed inside the job is that check's failure; one without a status, as one the
    job never reached, "no result"), its perf variables ``<inner>:<var>`` its own, with their
    precision (the job's PRECISION_FIELD under the same keys); None for any other test case."""
    status = tc.get(NODE_CHECKS_FIELD)
    names = tc.get("inner_names") if isinstance(tc.get("inner_names"), list) else []
    if not isinstance(status, dict) or not (status or names):
        return None
    why = str(tc.get("fail_reason") or "the node job ended without judging it").strip().splitlines() or [""]
    generated = "".join(m.group(0) for m in _GENERATED.finditer(str(tc.get("display_name") or "")))
    cases: list[dict[str, Any]] = []
    perf: list[tuple] = []
    at: dict[str, int] = {}
    for name in names or list(status):
        word, _, reason = str(status.get(name, f"{STATUS_NO_RESULT}: {why[0]}")).partition(": ")
        result, phase = _INNER_RESULT.get(word, (NO_RESULT, "run"))
        at[name] = len(cases)
        cases.append({**case, "test": name, "case": f"{name}{generated}", "result": result,
                      "fail_phase": phase, "fail_reason": reason or None, "retried": None})
    prefix = f"{tc.get('system')}:{tc.get('partition')}:"
    precs = tc.get(PRECISION_FIELD) if isinstance(tc.get(PRECISION_FIELD), dict) else {}
    for key, val in (tc.get("perfvalues") or {}).items():
        inner, sep, var = key[len(prefix):].rpartition(NODE_CHECK_SEP) if key.startswith(prefix) else ("", "", "")
        if not sep or inner not in at or not isinstance(val, (list, tuple)) or len(val) < 5:
            continue
        own = {"perfvalues": {var: val}, PRECISION_FIELD: {var: precs.get(f"{inner}{NODE_CHECK_SEP}{var}")}}
        perf += _perf_rows(own, at[inner])
    return cases, perf


#: a perf row's own columns (_perf_rows), after the position of its test case's row; the perf
#: frame is its test case's row (CASE_COLUMNS) with these (``raw``: the value as written)
_PERF_OWN = ["var", "value", "raw", "unit", "ref", "lower", "upper", "var_result", *PRECISION_COLUMNS]


def _word(value):
    """A word repeated on many rows (variable, unit, result) as one object (1.2 million perf rows
    of a week of 1,024-node nights hold a few hundred distinct ones)."""
    return sys.intern(value) if type(value) is str else value


def _perf_rows(tc, at):
    """The perf rows of a test case whose case row is at position ``at``: (at, *_PERF_OWN) per value."""
    perf = []
    precs = tc.get(PRECISION_FIELD)
    precs = precs if isinstance(precs, dict) else {}
    for key, val in (tc.get("perfvalues") or {}).items():
        if not isinstance(val, (list, tuple)) or len(val) < 5:
            continue
        value, ref, lower, upper, unit = val[:5]
        var = _word(key.rsplit(":", 1)[-1])
        perf.append((at, var, value, value, _word(unit), ref, lower, upper,
                     _word(val[5]) if len(val) > 5 else None, *_precision(precs.get(var))))
    return perf


_UNKNOWN_PRECISION = (None,) * len(PRECISION_COLUMNS)


def _precision(entry):
    """The precision columns' values (PRECISION_COLUMNS) of a perf variable from its entry in its
    test case's ``precision`` record (contract.PRECISION_FIELD: the within-run standard error of
    log(value), the median's 95 % interval, the p10, the samples and why sampling stopped); None
    each where the check recorded none (a native tool's variable, an older report): unknown."""
    if not isinstance(entry, dict):
        return _UNKNOWN_PRECISION
    ci = entry.get(PREC_CI)
    low, high = (ci[0], ci[1]) if isinstance(ci, (list, tuple)) and len(ci) == 2 else (None, None)
    return (entry.get(PREC_REL_SE), low, high, entry.get(PREC_P10), entry.get(PREC_SAMPLES),
            _word(entry.get(PREC_STOPPED)))


def _numbers_only(data, path, perf, tests):
    """``perf`` (a report's _PERF_OWN rows) without its rows of no value (``raw`` dropped);
    values that are not numbers said in one line (``tests``: each case's test, by ``_at``)."""
    if len(perf):
        odd = perf["value"].isna() & perf["raw"].map(lambda v: v is not None)  # a string or NaN, not a missing value
        if odd.any():
            said = ", ".join(f"{tests.iloc[at]} {var}={raw!r}" for at, var, raw in
                             perf.loc[odd, ["_at", "var", "raw"]].head(3).itertuples(index=False))
            data.problems.append(f"{path}: {int(odd.sum())} perf values are not numbers, left out: {said}")
        perf = perf[perf["value"].notna()].drop(columns="raw")  # a dry run's or a failed case's missing values
    return perf


def _numeric(df):
    for col in ("time", "value", "ref", "lower", "upper", *PRECISION_COLUMNS[:-1]):  # "stopped": a word
        if col in df:
            df[col] = pd.to_numeric(df[col], errors="coerce")
    return df


_RFM_MAIN = "import sys; from reframe.frontend.cli import main; sys.argv[0] = 'reframe'; sys.exit(main())"


def reframe_argv() -> list[str] | None:
    """How to run ReFrame: this interpreter's, else the ``reframe`` on PATH, else None."""
    import importlib.util
    if importlib.util.find_spec("reframe") is not None:
        return [sys.executable, "-c", _RFM_MAIN]
    exe = shutil.which("reframe")
    return [exe] if exe else None


def stored_sessions(query: str = ALL_SESSIONS, db_file: str | None = None, timeout: float = 300
                    ) -> tuple[list[dict[str, Any]], str | None]:
    """The sessions of ReFrame's results storage that match ``query``, through ReFrame's public
    interface (``reframe --describe-stored-sessions=QUERY``, JSON): (list of session documents,
    problem or None).  ``db_file``: that database (RFM_SQLITE_DB_FILE); None: the one ReFrame's
    configuration and RFM_* environment name."""
    argv = reframe_argv()
    if argv is None:
        return [], "ReFrame is not installed (pip install reframe-hpc): its results storage cannot be read"
    db = db_file or os.environ.get("RFM_SQLITE_DB_FILE")
    if db and not os.path.exists(db):  # ReFrame's lookup would create an empty database there
        return [], f"no results database at {db}: nothing stored there (a wrong RFM_SQLITE_DB_FILE?)"
    env = dict(os.environ, RFM_ENABLE_RESULTS_STORAGE="y")
    if db_file is not None:
        env["RFM_SQLITE_DB_FILE"] = os.path.abspath(db_file)
    try:
        proc = subprocess.run(argv + [f"--describe-stored-sessions={query}"], env=env, capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [], f"reframe --describe-stored-sessions did not answer ({exc})"
    text = proc.stdout
    start = text.find("[")
    if proc.returncode != 0 or start < 0:
        why = re.sub(r"\x1b\[[0-9;]*m", "", (proc.stdout + proc.stderr).strip()).splitlines()
        return [], (f"reframe --describe-stored-sessions failed (exit {proc.returncode}): "
                    + (why[-1] if why else "no output"))
    try:
        sessions = json.loads(text[start:])
    except json.JSONDecodeError as exc:
        return [], f"reframe --describe-stored-sessions gave no JSON ({exc.msg})"
    return [s for s in sessions if isinstance(s, dict)], None


def _read_sessions(data, sessions, path, history):
    n = 0
    for doc in sessions:
        try:
            _read_report(data, doc, path, history, "database")
            n += 1
        except (KeyError, TypeError, AttributeError) as exc:
            data.problems.append(f"{path}: a stored session could not be read ({exc}): skipped")
    return "database", f"{n} sessions"


def _read_db(data, path, history):
    with open(path, "rb") as fp:
        if not fp.read(16).startswith(b"SQLite format 3"):
            return _problem(data, path, "not a ReFrame results database (not an SQLite file): skipped")
    sessions, problem = stored_sessions(db_file=path)
    if problem:
        return _problem(data, path, f"not read: {problem}")
    return _read_sessions(data, sessions, path, history)


def load_storage(data: Inputs, query: str = ALL_SESSIONS) -> None:
    """Add the sessions of ReFrame's results storage (located by ReFrame: RFM_SQLITE_DB_FILE or its
    configuration) that match ``query``."""
    where = f"ReFrame results storage ({database_label()})"
    sessions, problem = stored_sessions(query)
    if problem:
        data.problems.append(f"{where}: {problem}")
        data.files.append((where, "problem", problem))
        return
    kind, note = _read_sessions(data, sessions, where, False)
    data.files.append((where, kind, note))


def _widen_perflog(df):
    """ReFrame's perflog_multiline lines (perf_var, perf_value, perf_unit, ... per line) as the
    default format's one row per run with <var>_value, <var>_unit, ... columns."""
    fields = ("value", "unit", "ref", "lower_thres", "upper_thres")
    run_cols = [c for c in df.columns if c != "perf_var" and not c.startswith("perf_")]
    rows = []
    for _, lines in df.groupby(run_cols, sort=False, dropna=False):
        row = dict(lines.iloc[0][run_cols])
        row.setdefault("name", row.get("display_name", "?"))
        for _, line in lines.iterrows():
            if line["perf_var"] not in ("", "null", "None"):
                row.update({f"{line['perf_var']}_{f}": line.get(f"perf_{f}") for f in fields})
        rows.append(row)
    return pd.DataFrame(rows)


def _read_perflog(data, path, explicit, history):
    """A ReFrame 4 perflog (a header line, then one line per run or per perf variable) into ``data``: (kind, note)."""
    with open(path, errors="replace") as fp:
        lines = [ln.rstrip("\n") for ln in fp if ln.strip()]
    header = lines[0].split("|") if lines else []
    if "job_completion_time" not in header or "result" not in header:
        return _not_a_perflog(data, path, lines, explicit)
    rows = [ln.split("|") for ln in lines[1:]]
    good = [r for r in rows if len(r) == len(header)]
    if len(good) < len(rows):
        data.problems.append(f"{path}: {len(rows) - len(good)} of {len(rows)} lines do not match the "
                             "header (written with another perflog format?): skipped")
    if not good:
        return _problem(data, path, "no complete perflog lines") if rows else ("perflog", "header only")
    df = pd.DataFrame(good, columns=header)
    if "perf_var" in header:  # one line per perf variable (config/results.py): one row per run
        df = _widen_perflog(df)
        header = list(df.columns)
    variables = [c[:-6] for c in header if c.endswith("_value") and f"{c[:-6]}_unit" in header]
    unix = pd.to_numeric(_column(df, "job_completion_time_unix"), errors="coerce") \
        if "job_completion_time_unix" in df else pd.Series(float("nan"), index=df.index)
    dry = _dry_lines(df, variables, unix)
    base = _perflog_cases(df, unix, dry, path, history)
    data.cases.append(base)
    perf = [base.assign(var=v, value=df[f"{v}_value"], unit=df[f"{v}_unit"], ref=_column(df, f"{v}_ref"),
                        lower=_column(df, f"{v}_lower_thres"), upper=_column(df, f"{v}_upper_thres"),
                        var_result=None)
            for v in variables]
    perf = _numeric(pd.concat(perf, ignore_index=True)) if perf else pd.DataFrame()
    if len(perf):
        perf = perf[perf["value"].notna()]
        data.perf.append(perf)
    note = f", {int(dry.sum())} of them --dry-run lines (nothing measured)" if dry.any() else ""
    return "perflog", f"{len(df)} runs, {len(perf)} perf values{note}"


def _not_a_perflog(data, path, lines, explicit):
    """(kind, note) of a file without a ReFrame 4 perflog's header: ReFrame 3's said, a file asked for a problem."""
    if lines and _RFM3_LINE.match(lines[0]):
        return _problem(data, path, "perflog in the older one-line-per-variable format of ReFrame 3 "
                        "(no header line): not read; ReFrame 4 perflogs start with a "
                        "'result|job_completion_time|...' header")
    if explicit:
        return _problem(data, path, "not a ReFrame 4 perflog (no 'result|job_completion_time|...' "
                        "header line): skipped")
    return "ignored", "not a perflog"


def _column(df, name, default=None):
    """Column ``name`` of ``df``, else ``default``."""
    return df[name] if name in df else default


def _dry_lines(df, variables, unix):
    """Which perflog rows are --dry-run lines: "pass" without a job (no job id, no completion time) and no value."""
    novalue = pd.concat([pd.to_numeric(df[f"{v}_value"], errors="coerce").isna() for v in variables], axis=1) \
        .all(axis=1) if variables else pd.Series(True, index=df.index)
    nojob = unix.isna() & (df["jobid"].isin(["", "null", "None"]) if "jobid" in df else True)
    return (df["result"] == "pass") & nojob & novalue


def _perflog_cases(df, unix, dry, path, history):
    """The cases rows (CASE_COLUMNS) of a perflog's runs."""
    stamp = df["job_completion_time"].map(lambda t: pd.to_datetime(t, utc=True, errors="coerce"))  # mixed formats
    time = stamp.map(lambda t: t.timestamp() if pd.notna(t) else float("nan")).astype(float)
    shown = _column(df, "name", _column(df, "short_name", pd.Series("?", index=df.index)))
    ident = [case_identity(d, None, re.findall(r"[\w.-]+", n) if isinstance(n, str) else ())
             for d, n in zip(shown, _column(df, "job_nodelist", pd.Series("", index=df.index)))]
    return pd.DataFrame({
        "time": unix.fillna(time), "session": None, "system": _column(df, "system", "?"),
        "partition": _column(df, "partition", "?"), "environ": _column(df, "environ", "?"),
        "test": [i[0] for i in ident], "case": [i[1] for i in ident], "node": [i[2] for i in ident],
        "repeat": [i[3] for i in ident], "nodes": _column(df, "job_nodelist", "?"), "result": df["result"],
        "fail_phase": None, "fail_reason": None, "dry_run": dry, "outputdir": None,
        "history": history, "kind": "perflog", "source": path})
