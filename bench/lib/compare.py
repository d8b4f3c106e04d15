"""Payload against native tool on the same GPUs, in one go (bench/compare).

Each pair runs the payload and its native counterpart alternately (payload, native, payload,
native, ... R times), so slow drifts of the node hit both alike; the table holds, per metric
and size, the medians over the R runs and payload / native.  Bandwidth ratios above 1 favour
the payload; for latencies the ratio is payload time / native time (below 1 favours the
payload).  Every native command line comes from the package's builders and every output is
parsed with its parsers (gpucomm.native, as the checks; the payload's --json records), and every
launch under mpirun gets the local ReFrame config's options
(gpucomm.siteconf.local_mpirun_options), so both sides move data the same way.

This module builds commands and tables and runs nothing itself but through ``run_pairs``'s
``runner``: the tests drive it with captured outputs.
"""

from __future__ import annotations

import csv
import io
import json
import os
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, cast

from gpucomm.contract import by_size, parse_output, record_value
from gpucomm.errors import GpucommError
from gpucomm.native import nccl_tests_options, osu_options, parse_nccl_tests, parse_osu
from gpucomm.native.tools import find_binary
from gpucomm.sizes import size_label

MiB = 1 << 20

#: the comparison sizes: latency at 8 B, bandwidth from 64 MiB up
SIZES = [8, 64 * MiB, 256 * MiB, 1024 * MiB]
BIG = 64 * MiB

#: extra payload options per pair: {pair: {variant: [options]}}; one payload run per variant.
#: --graph (CUDA graph of the timed loop) and --batch (iterations per timed sample) are the
#: payload's timing options: adjust here when they change
PAYLOAD_VARIANTS = {
    "ccl-pingpong": {"graph-on": ["--graph", "on"], "graph-off": ["--graph", "off"]},
}

#: acceptance: {(pair, variant or '*', 'bw'|'lat'): criterion}; a criterion is
#: ('ratio_min', r): payload / native >= r at every size >= 64 MiB;
#: ('over_native_max', d): payload latency <= native + d us;  ('abs_max', us): payload <= us;
#: ('native_and_abs_max', us): payload latency <= native and <= us;  None: reported, not judged
#: Bandwidth is judged operation against the same operation: the bw operation (a window of
#: messages, then one acknowledgement) against the copy engine's back-to-back copies and
#: osu_bw, the ping-pong against osu_latency's ping-pong.  A ping-pong against a one-way
#: stream is reported, not judged: each of its transfers waits for the one before to be
#: answered, one hand-over latency per transfer that no stream pays (~5 us with ipc-copy's
#: stream flags, ~9 us through UCX on the reference node: 3-5 % of a 64 MiB transfer, measured as the
#: results README says).
CRITERIA = {
    ("ipc-copy-bw", "*", "bw"): ("ratio_min", 0.97),
    ("ipc-copy", "*", "bw"): None,
    ("ccl-pingpong", "*", "bw"): ("ratio_min", 0.97),
    ("ccl-allreduce", "*", "bw"): ("ratio_min", 0.97),
    ("gpu-aware-mpi", "*", "bw"): ("ratio_min", 0.97),
    ("gpu-aware-mpi-bw", "*", "bw"): ("ratio_min", 0.97),
    ("gpu-aware-mpi", "*", "lat"): None,
    # the payload's default (the loop in a CUDA graph) against nccl-tests' default loop:
    # both <= nccl-tests and <= 7 us; the plain loop is reported, not judged
    ("ccl-pingpong", "graph-on", "lat"): ("native_and_abs_max", 7.0),
    ("ccl-pingpong", "graph-off", "lat"): None,
    ("host", "*", "lat"): ("over_native_max", 0.1),  # within 0.1 us of osu_latency
}


@dataclass
class Metric:
    """One compared number: at ``size``, the payload's ``payload_key`` against the native
    tool's ``native_key`` ('latency': the median time in us, else a record field, GB/s)."""
    kind: str  # 'bw' or 'lat'
    size: int
    payload_key: str
    native_key: str
    native_tool: str  # which native run provides it (a key of Pair.native)


@dataclass
class Pair:
    """A payload run and the native runs it is compared with."""
    name: str
    op: str
    method: str
    gpus: bool
    native: Dict[str, dict]  # tool key -> {'binary': name, 'kind': parser kind, 'args': [...], 'mpi': bool}
    metrics: List[Metric]
    nranks: int = 2
    variants: Dict[str, List[str]] = field(default_factory=lambda: {"default": []})
    #: iterations and warm-up at the latency sizes (0: the run's), a payload run of their own
    lat_iters: int = 0
    lat_warmup: int = 0


def _sizes_arg(sizes):
    return ",".join(str(s) for s in sizes)


class _Tools:
    """The native tools' runs of one comparison (make_pairs' options): osu_latency with -c at the
    latency sizes, osu_latency and osu_bw without -c at the bandwidth sizes, nccl-tests."""

    def __init__(self, sizes: list[int], iters: int, warmup: int, lat_iters: int, lat_warmup: int) -> None:
        self.sizes, self.iters, self.warmup = sizes, iters, warmup
        self.lat_iters, self.lat_warmup = lat_iters, lat_warmup
        self.lat = [s for s in sizes if s < BIG]
        self.big = [s for s in sizes if s >= BIG]
        self.lo, self.hi = (min(self.big), max(self.big)) if self.big else (BIG, BIG)

    def osu(self, bench, first, last, **opts):
        opts = {"iters": self.iters, "warmup": self.warmup, **opts}
        return {"binary": bench, "kind": "osu", "mpi": True, "args": osu_options(bench, first, last, **opts)}

    def nccl_tests(self, test, nranks):
        return {"binary": f"{test}_perf", "kind": "nccl-tests", "mpi": True,
                "args": nccl_tests_options(test, min(self.sizes), max(self.sizes), nranks=nranks,
                                           iters=self.iters, warmup=self.warmup)}

    def osu_lat(self, dev):
        return self.osu("osu_latency", min(self.lat or [8]), max(self.lat or [8]), validate=True,
                        iters=self.lat_iters or self.iters, warmup=self.lat_warmup or self.warmup, device=dev)

    def osu_lat_big(self, dev):
        # the ping-pong at the bandwidth sizes: osu_latency without -c (its check copies every
        # message to the host), as osu_bw
        return self.osu("osu_latency", self.lo, self.hi, device=dev)

    def osu_bw(self, dev, w):
        return self.osu("osu_bw", self.lo, self.hi, window=w, device=dev)


def make_pairs(ngpus: int = 2, sizes: list[int] = SIZES, iters: int = 50, warmup: int = 5, window: int = 8,
               lat_iters: int = 0, lat_warmup: int = 0) -> list[Pair]:
    """The comparison pairs (bench/compare's docstring: what is compared with what; CRITERIA:
    why operation against the same operation).  ``iters`` and ``warmup`` go to every tool;
    ``lat_iters`` and ``lat_warmup`` (0: the same), to the latency sizes of the pairs judged
    against osu_latency (host, gpu-aware-mpi), payload and osu_latency alike: a sub-microsecond
    median wants OSU's own 10000 iterations, which at 1 GiB would take minutes;
    ``window`` is osu_bw's -W and the payload bw's --window (messages in flight: the default
    64 x 1 GiB would take seconds per iteration; host memory moves ~6 GB/s: one message).
    osu_bw runs without -c: its validation fills and checks the buffer on the CPU every
    iteration (a host osu_bw at 64 MiB outlived 20 s on the reference node); osu_latency keeps
    -c at the latency sizes."""
    tools = _Tools(sizes, iters, warmup, lat_iters, lat_warmup)
    lat, big = tools.lat, tools.big
    wopt = {"default": ["--window", str(window)]}
    dev = "cuda"
    ce = {"binary": "bench/ce_copy.py", "kind": "ce", "mpi": False,
          "args": ["--iters", str(iters)], "per_size": big}
    return [
        Pair("ipc-copy-bw", "bw", "ipc-copy", True, {"ce": ce},
             [Metric("bw", s, "goodput_GBps", "back_to_back_GBps", "ce") for s in big], variants=wopt),
        Pair("ipc-copy", "pingpong", "ipc-copy", True, {"ce": ce},
             [Metric("bw", s, "goodput_GBps", "goodput_GBps", "ce") for s in big]),
        Pair("ccl-pingpong", "pingpong", "ccl", True,
             {"sendrecv": tools.nccl_tests("sendrecv", 2)},
             [Metric("lat", s, "latency", "latency", "sendrecv") for s in lat]
             + [Metric("bw", s, "goodput_GBps", "busbw_GBps", "sendrecv") for s in big],
             variants=PAYLOAD_VARIANTS["ccl-pingpong"]),
        Pair("ccl-allreduce", "allreduce", "ccl", True,
             {"all_reduce": tools.nccl_tests("all_reduce", ngpus)},
             [Metric("lat", s, "latency", "latency", "all_reduce") for s in lat]
             + [Metric("bw", s, "busbw_GBps", "busbw_GBps", "all_reduce") for s in big],
             nranks=ngpus),
        Pair("gpu-aware-mpi-bw", "bw", "gpu-aware-mpi", True, {"osu_bw": tools.osu_bw(dev, window)},
             [Metric("bw", s, "goodput_GBps", "goodput_GBps", "osu_bw") for s in big], variants=wopt),
        Pair("gpu-aware-mpi", "pingpong", "gpu-aware-mpi", True,
             {"osu_latency": tools.osu_lat(dev), "osu_latency_big": tools.osu_lat_big(dev)},
             [Metric("lat", s, "latency", "latency", "osu_latency") for s in lat]
             + [Metric("bw", s, "goodput_GBps", "goodput_GBps", "osu_latency_big") for s in big],
             lat_iters=lat_iters, lat_warmup=lat_warmup),
        Pair("host", "pingpong", "host", False,
             {"osu_latency": tools.osu_lat(""), "osu_bw": tools.osu_bw("", 1)},
             [Metric("lat", s, "latency", "latency", "osu_latency") for s in lat]
             + [Metric("bw", s, "goodput_GBps", "goodput_GBps", "osu_bw") for s in big],
             lat_iters=lat_iters, lat_warmup=lat_warmup),
    ]


def criterion(pair: str, variant: str, kind: str) -> tuple[str, float] | None:
    if (pair, variant, kind) in CRITERIA:
        return CRITERIA[(pair, variant, kind)]
    return CRITERIA.get((pair, "*", kind))


# ---------------------------------------------------------------- parsing

def parse_payload(text: str) -> dict[int, dict[str, Any]]:
    """{size: record} from the payload's --json file, or from its GPUCOMM-RESULT stdout lines."""
    try:
        return by_size(json.loads(text)["results"])
    except (ValueError, KeyError, TypeError):
        pass
    recs = by_size(parse_output(text)[0])
    if not recs:
        raise GpucommError("no payload records (no --json results, no GPUCOMM-RESULT lines)")
    return recs


def parse_ce(text: str) -> dict[int, dict[str, Any]]:
    """{size: record} from bench/ce_copy.py's 'CE-COPY {json}' line: the 'write' copy (issued
    on the source GPU, like ipc-copy's push): the median of single copies (goodput_GBps, for
    the ping-pong) and the rate of its copies back to back (back_to_back_GBps, for bw)."""
    for line in text.splitlines():
        if line.startswith("CE-COPY "):
            res = json.loads(line[len("CE-COPY "):])["write"]
            if not res.get("validated"):
                raise GpucommError("CE copy: data check failed")
            return {res["size"]: {"size": res["size"], "goodput_GBps": res["median_GBps"],
                                  "back_to_back_GBps": res["back_to_back_GBps"], "validated": True}}
    raise GpucommError("no CE-COPY line in bench/ce_copy.py's output")


def parse_native(kind: str, text: str, binary: str, nranks: int) -> dict[int, dict[str, Any]]:
    """{size: record} of one native run, with the package's parsers; a record whose tool
    validation failed raises (a wrong result is no comparison)."""
    if kind == "ce":
        return parse_ce(text)
    if kind == "nccl-tests":
        meta, recs = parse_nccl_tests(text, nranks=nranks)
        if meta["out_of_bounds_ok"] is False:
            raise GpucommError(f"{binary}: {meta['out_of_bounds']} values out of bounds")
    else:
        meta, recs = parse_osu(text, binary, nranks=nranks)
    bad = [size_label(r["size"]) for r in recs if r.get("validated") is False]
    if bad:
        raise GpucommError(f"{binary}: the tool's validation failed at {', '.join(bad)}")
    return by_size(recs)


value = record_value


# ---------------------------------------------------------------- the table

COLUMNS = ["pair", "variant", "metric", "size", "payload", "native", "unit", "ratio", "runs",
           "criterion", "result"]


def _criterion_text(crit, native_name):
    if crit is None:
        return ""
    kind, x = crit
    if kind == "ratio_min":
        return f"ratio >= {x:g}"
    if kind == "abs_max":
        return f"<= {x:g} us"
    if kind == "native_and_abs_max":
        return f"<= {native_name} and <= {x:g} us"
    return f"<= {native_name}" + (f" + {x:g} us" if x else "")


def judge(crit: tuple[str, float] | None, kind: str, size: int, payload: float | None,
          native: float | None) -> str:
    """'PASS', 'FAIL' or '' (no criterion here) for one row."""
    if crit is None or payload is None or (native is None and crit[0] != "abs_max"):
        return "" if crit is None else "FAIL"
    how, x = crit
    native = cast(float, native)  # None only for abs_max, which reads no native value
    if how == "ratio_min":
        return "" if size < BIG else ("PASS" if payload / native >= x else "FAIL")
    if kind != "lat":
        return ""
    if how == "abs_max":
        return "PASS" if payload <= x else "FAIL"
    if how == "native_and_abs_max":
        return "PASS" if payload <= native and payload <= x else "FAIL"
    return "PASS" if payload <= native + x else "FAIL"


def table_rows(pair: Pair, payload_runs: dict[str, list[dict[int, dict[str, Any]]]],
               native_runs: dict[str, list[dict[int, dict[str, Any]]]]) -> list[dict[str, Any]]:
    """Rows for one pair.  ``payload_runs``: {variant: [{size: record} per run]};
    ``native_runs``: {tool key: [{size: record} per run]}; failed runs are left out."""
    rows = []
    for variant, runs in payload_runs.items():
        for m in pair.metrics:
            p = [value(r[m.size], m.payload_key) for r in runs if m.size in r]
            n = [value(r[m.size], m.native_key) for r in native_runs.get(m.native_tool, []) if m.size in r]
            pm = statistics.median(p) if p else None
            nm = statistics.median(n) if n else None
            crit = criterion(pair.name, variant, m.kind)
            if crit and crit[0] == "ratio_min" and m.size < BIG:
                crit = None
            tool = pair.native[m.native_tool]["binary"].rsplit("/", 1)[-1]
            rows.append({
                "pair": pair.name, "variant": variant,
                "metric": f"{'latency' if m.kind == 'lat' else m.payload_key} vs {tool} "
                          f"{'latency' if m.kind == 'lat' else m.native_key}",
                "size": m.size, "payload": pm, "native": nm, "unit": "us" if m.kind == "lat" else "GB/s",
                "ratio": pm / nm if pm is not None and nm else None, "runs": f"{len(p)}/{len(n)}",
                "criterion": _criterion_text(crit, tool), "result": judge(crit, m.kind, m.size, pm, nm)})
    return rows


def _fmt(v, digits=3):
    return "" if v is None else (f"{v:.{digits}f}" if isinstance(v, float) else str(v))


def markdown(rows: list[dict[str, Any]], not_run: list[tuple[str, str]]) -> str:
    """The ratio table, then one line per pair (or variant) that did not run."""
    out = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in rows:
        cells = [r["pair"], r["variant"], r["metric"], size_label(r["size"]), _fmt(r["payload"], 2),
                 _fmt(r["native"], 2), r["unit"], _fmt(r["ratio"]), r["runs"], r["criterion"], r["result"]]
        out.append("| " + " | ".join(cells) + " |")
    out += [""] + [f"- {name}: not run: {why}" for name, why in not_run]
    return "\n".join(out) + "\n"


def csv_text(rows: list[dict[str, Any]], not_run: list[tuple[str, str]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS + ["not_run"], lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({**r, "ratio": _fmt(r["ratio"], 4), "payload": _fmt(r["payload"], 4),
                    "native": _fmt(r["native"], 4)})
    for name, why in not_run:
        pair, _, variant = name.partition("/")
        w.writerow({"pair": pair, "variant": variant, "not_run": why})
    return buf.getvalue()


# ---------------------------------------------------------------- commands and running

@dataclass
class Setup:
    """What the harness knows about the node: from probe.node_info() and the tool folders."""
    mpirun: Optional[str]
    mpirun_opts: List[str]
    ngpus: int
    python: str = sys.executable
    osu_dir: Optional[str] = None
    nccl_tests_dir: Optional[str] = None
    repo: str = "."


def locate(pair_tool: dict[str, Any], setup: Setup) -> tuple[str | None, str | None]:
    """Path of a native binary, or (None, why)."""
    name = pair_tool["binary"]
    if pair_tool["kind"] == "ce":
        path = os.path.join(setup.repo, name)
        return (path, None) if os.path.exists(path) else (None, f"{name} missing")
    env_var, d = (("GPUCOMM_OSU_DIR", setup.osu_dir) if pair_tool["kind"] == "osu"
                  else ("GPUCOMM_NCCL_TESTS_DIR", setup.nccl_tests_dir))
    path = find_binary(name, [d])
    return (path, None) if path else (None, f"{name} not found (set {env_var} or put it on PATH)")


def _mpi(setup, n):
    return [setup.mpirun, "-np", str(n)] + list(setup.mpirun_opts)


def payload_cmd(pair: Pair, variant: str, setup: Setup, sizes: list[int], iters: int, warmup: int,
                json_path: str) -> list[str]:
    return (_mpi(setup, pair.nranks) +
            [setup.python, "-m", "gpucomm", pair.op, "--method", pair.method, "--sizes", _sizes_arg(sizes),
             "--iters", str(iters), "--warmup", str(warmup), "--json", json_path]
            + pair.variants[variant])


def payload_cmds(pair: Pair, variant: str, setup: Setup, sizes: list[int], iters: int, warmup: int,
                 stem: str) -> list[tuple[list[str], str]]:
    """[(argv, json path)]: one payload run, or two where the pair times its latency sizes with
    iterations of their own (``stem``-lat.json, then ``stem``.json)."""
    lat = [s for s in sizes if s < BIG]
    big = [s for s in sizes if s >= BIG]
    if pair.lat_iters and lat and (pair.lat_iters, pair.lat_warmup or warmup) != (iters, warmup):
        runs = [(lat, pair.lat_iters, pair.lat_warmup or warmup, stem + "-lat.json")]
        if big:
            runs.append((big, iters, warmup, stem + ".json"))
    else:
        runs = [(sizes, iters, warmup, stem + ".json")]
    return [(payload_cmd(pair, variant, setup, sz, it, wu, path), path) for sz, it, wu, path in runs]


def native_cmds(pair: Pair, tool: str, path: str, setup: Setup) -> list[tuple[int | None, list[str]]]:
    """[(size or None, argv)]: one command, or one per size for the single-size CE copy."""
    spec = pair.native[tool]
    if spec["kind"] == "ce":
        return [(s, [setup.python, path, "--size", str(s)] + spec["args"]) for s in spec["per_size"]]
    return [(None, _mpi(setup, pair.nranks) + [path] + spec["args"])]


def why_not(pair: Pair, setup: Setup) -> str | None:
    """Why a whole pair cannot run here, or None."""
    if setup.mpirun is None:
        return "no mpirun"
    if pair.gpus and setup.ngpus < 2:
        return "no GPU" if setup.ngpus == 0 else f"{setup.ngpus} GPU, 2 needed"
    return None


def prepare(pair: Pair, setup: Setup) -> tuple[dict[str, str] | None, str | None]:
    """({tool: binary path}, None), or (None, why the pair cannot run here)."""
    why = why_not(pair, setup)
    if why:
        return None, why
    paths: dict[str, Any] = {}  # a path wherever locate says nothing missing
    for tool, spec in pair.native.items():
        paths[tool], missing = locate(spec, setup)
        if missing:
            return None, missing
    return paths, None


def dry_run(pairs: list[Pair], setup: Setup, repeats: int, sizes: list[int] = SIZES, iters: int = 50,
            warmup: int = 5, out: str = "OUT") -> str:
    """The commands ``run_pairs`` would run for each pair (one repetition of R), as text."""
    lines = []
    for pair in pairs:
        paths, why = prepare(pair, setup)
        if why:
            lines.append(f"# {pair.name}: not run: {why}")
            continue
        lines.append(f"# {pair.name}: {repeats} x (payload variants, then native), alternating")
        for variant in pair.variants:
            stem = os.path.join(out, "raw", pair.name, f"R-payload-{variant}")
            lines += [" ".join(argv) for argv, _ in payload_cmds(pair, variant, setup, sizes, iters, warmup, stem)]
        for tool in pair.native:
            lines += [" ".join(argv) for _, argv in native_cmds(pair, tool, paths[tool], setup)]  # type: ignore[index]  # prepare gives paths wherever it gives no why
    return "\n".join(lines) + "\n"


def run_pairs(pairs: list[Pair], setup: Setup, out: str, repeats: int,
              runner: Callable[[list[str], str], tuple[int, str]], sizes: list[int] = SIZES, iters: int = 50,
              warmup: int = 5, log: Callable[[str], object] = print, replay: bool = False
              ) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Run every pair ``repeats`` times, payload and native alternating; write raw outputs to
    out/raw/, return (rows, not_run).  ``runner(argv, stdout_path) -> (returncode, text)``.
    ``replay``: the outputs are already in out/raw/ (see replay_runner), nothing is located."""
    rows, not_run = [], []
    for pair in pairs:
        paths: dict[str, Any] | None
        if replay:
            paths, why = {t: spec["binary"] for t, spec in pair.native.items()}, None
        else:
            paths, why = prepare(pair, setup)
        if why:
            not_run.append((pair.name, why))
            log(f"{pair.name}: not run: {why}")
            continue
        raw = os.path.join(out, "raw", pair.name)
        os.makedirs(raw, exist_ok=True)
        payload_runs, native_runs, failed = _run_pair(pair, paths, setup, raw, repeats, runner, sizes, iters, warmup)
        for name, why in failed.items():
            not_run.append((f"{pair.name}/{name}", f"failed: {why}"))
        ok_variants = {v: runs for v, runs in payload_runs.items() if runs}
        rows += table_rows(pair, ok_variants, native_runs)
    return rows, not_run


def _run_pair(pair, paths, setup, raw, repeats, runner, sizes, iters, warmup):
    """One pair's runs, ``repeats`` times payload and native alternating, raw outputs in
    ``raw``: ({variant: [records by size]}, {tool: [records by size]}, {variant or tool: why it
    failed})."""
    payload_runs: dict[str, list[dict]] = {v: [] for v in pair.variants}
    native_runs: dict[str, list[dict]] = {t: [] for t in pair.native}
    failed = {}
    for r in range(repeats):
        for variant in pair.variants:
            if variant in failed:
                continue
            stem = os.path.join(raw, f"{r}-payload-{variant}")
            recs = {}
            try:
                for argv, path in payload_cmds(pair, variant, setup, sizes, iters, warmup, stem):
                    rc, text = runner(argv, path[:-len(".json")] + ".out")
                    if rc != 0:
                        raise GpucommError(_first_error(text, rc))
                    with open(path) as fp:
                        recs.update(parse_payload(fp.read()))
                payload_runs[variant].append(recs)
            except (OSError, GpucommError) as exc:
                failed[variant] = str(exc)
        for tool in pair.native:
            recs = {}
            for size, argv in native_cmds(pair, tool, paths[tool], setup):
                stem = os.path.join(raw, f"{r}-native-{tool}" + (f"-{size}" if size else ""))
                rc, text = runner(argv, stem + ".out")
                try:
                    if rc != 0:
                        raise GpucommError(_first_error(text, rc))
                    spec = pair.native[tool]
                    recs.update(parse_native(spec["kind"], text, spec["binary"], pair.nranks))
                except GpucommError as exc:
                    failed[tool] = str(exc)
            if recs:
                native_runs[tool].append(recs)
    return payload_runs, native_runs, failed


def replay_runner(argv: list[str], stdout_path: str) -> tuple[int, str]:
    """A runner over an earlier run's out/raw/: its recorded output, so that a run cut short
    (a time limit) still gives the table of what it measured; a missing file did not run."""
    try:
        with open(stdout_path) as fp:
            text = fp.read()
    except OSError:
        return 127, "error: not run (the earlier run ended before it)"
    return (124 if text.startswith("error: timed out") else 0), text


def _first_error(text, rc):
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    err = [ln for ln in lines if "error" in ln.lower()]
    return f"exit {rc}: {(err or lines or ['no output'])[0][:200]}"


def select(pairs: list[Pair], only: str | None) -> list[Pair]:
    """The pairs named in ``only`` ('a,b'), all if empty; unknown names raise."""
    if not only:
        return pairs
    names = [n.strip() for n in only.split(",") if n.strip()]
    known = {p.name for p in pairs}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise GpucommError(f"unknown pair(s) {', '.join(unknown)}: choose from {', '.join(sorted(known))}")
    return [p for p in pairs if p.name in names]
