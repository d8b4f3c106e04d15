"""The one contract between the payload and whoever reads its output (checks, report, compare).

The payload prints one ``GPUCOMM-RESULT {json}`` line per size (a *record*), ends with one
``GPUCOMM-DONE {json}`` line (its *summary*: ok, per-method status, error), writes both to the
``--json`` file the checks keep (RESULTS_FILE), and says an error as one ``gpucomm: error: ...``
line on stderr.  Perf variables are named after *points* of a sweep: a size and a record field
(``latency`` = the median time in us).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from .constants import (
    BW,
    LOOP_AUTO,
    LOOP_CHOICES,
    LOOP_ENV,
    METHODS,
    PRECISION_CAP_S,
    PRECISION_TARGET_BANDWIDTH,
    PRECISION_TARGET_LATENCY,
    WATCH_PID_ENV,
)

#: a payload record (one GPUCOMM-RESULT line) or summary (the GPUCOMM-DONE line), as JSON gives it
Record = dict[str, Any]

RESULT_TAG = "GPUCOMM-RESULT"
DONE_TAG = "GPUCOMM-DONE"
ERROR_PREFIX = "gpucomm: error:"
#: the --json file a check asks for and keeps
RESULTS_FILE = "gpucomm_results.json"
#: ReFrame's name of a job's stdout
STDOUT_FILE = "rfm_job.out"
#: a noise job's results files (rfm.noise): the victim quiet, under the aggressor, the aggressor
NOISE_FILES = {"quiet": "gpucomm_quiet.json", "noisy": "gpucomm_noisy.json",
               "aggressor": "gpucomm_aggressor.json"}
#: the node-state reader's one record (site.nodestate: what it read of every GPU and NIC, the
#: problems found), the file it writes (--json) and the node class's expected values it reads
#: (--expect), which the NodeStateCheck keeps
NODESTATE_TAG = "GPUCOMM-NODESTATE"
NODESTATE_FILE = "gpucomm_nodestate.json"
NODESTATE_EXPECTED_FILE = "gpucomm_nodestate_expected.json"
#: the per-node acceptance job (rfm.nodejob: every check of one node in one job): its loggable
#: {inner check's name: status} (STATUS_PASS, or "fail: REASON", "skip: REASON", "no result:
#: REASON"), its perf variables named "<inner check's name>" NODE_CHECK_SEP "<its variable>", the
#: job script's line after each inner launch (NODE_CHECK_TAG <index> <exit status>) and the file
#: it goes to, in the job's stage directory
NODE_CHECKS_FIELD = "node_checks"
NODE_CHECK_SEP = ":"
NODE_CHECK_TAG = "GPUCOMM-NODE-CHECK"
NODE_STATUS_FILE = "gpucomm_node_checks.txt"
STATUS_PASS, STATUS_FAIL, STATUS_SKIP, STATUS_NO_RESULT = "pass", "fail", "skip", "no result"
#: the environment variables a check sets anew for every run (a token of the run, not software:
#: the nightly's history of a node is keyed by its software, analysis.inputs.software_of)
PER_RUN_ENV = (WATCH_PID_ENV,)
#: a check's loggable record of the versions its run used (rfm.software: "gpucomm V; mpi M;
#: driver D"), in every test case of a ReFrame report
SOFTWARE_FIELD = "software"
#: the check's loggable variable holding every perf variable's precision (session report), and
#: the payload record's field holding the median time's precision (in us: metrics.median_precision_us,
#: with the record's STOPPED word); each perf variable's is the record's in its own unit (rfm.precision)
PRECISION_FIELD = "precision"
#: the node pair matrix's loggable variable holding every pair (session report): {"nodes": [host
#: by rank], "values": {base name: {"unit": unit, "pairs": [[rank, rank, value], ...]}}}; its
#: perf variables are per node (a node's slowest and median pair), the verdict reads the pairs here
PAIRS_FIELD = "pair_values"
#: keys of one perf variable's precision (and of a record's)
PREC_SAMPLES, PREC_BLOCKS, PREC_CI, PREC_P10, PREC_BLOCK_SPREAD, PREC_REL_SE, PREC_STOPPED = (
    "samples", "blocks", "ci95", "p10", "block_spread", "rel_se", "stopped")
#: why a size's sampling stopped: the median's interval reached its target after added blocks,
#: the size's time cap was spent with it wider, the size's iterations ran and were enough (or the
#: target is off)
STOP_TARGET, STOP_CAP, STOP_ITERS = "target", "cap", "iters"
STOP_WORDS = (STOP_TARGET, STOP_CAP, STOP_ITERS)
#: the record field a perf point may name instead of a record key: the median time (us)
LATENCY = "latency"
#: record and meta keys of the MPI methods: which timed loop ran (constants.LOOPS) and, where it
#: was mpi4py's, why not the compiled one (payload.fastloop)
TIMED_LOOP, TIMED_LOOP_NOTE = "timed_loop", "timed_loop_note"
#: a soak's record fields (--validate-every N, payload.soak): N, the samples checked, and those
#: whose received data was wrong (nccl-tests' ``#wrong`` counts elements, this samples)
VALIDATE_EVERY, CHECKED, WRONG = "validate_every", "checked", "wrong"
#: a default sweep stopped by memory (--fit-memory): every record of the method carries the
#: largest size its rank's memory share allowed, and the meta the sentence that says why
CAPPED_AT, SIZES_CAPPED = "capped_at", "sizes_capped"


#: terminal control sequences another rank's process may write into the shared output without
#: a newline (colorama's reset at exit, which numba sets up: 21-every-method), so that the next
#: line of rank 0 starts with it
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class DamagedOutput(json.JSONDecodeError):
    """A RESULT_TAG or DONE_TAG line whose JSON does not parse (a rank killed mid-print, two
    processes' output run together); its message is one line: the tag, where, and a prefix."""


#: characters of a damaged line its message shows
DAMAGED_EXCERPT = 80


def _tagged(number: int, line: str) -> tuple[str, Record] | None:
    """(tag, its JSON) of a RESULT_TAG or DONE_TAG line, else None; DamagedOutput where the JSON
    does not parse."""
    for tag in (RESULT_TAG, DONE_TAG):
        if line.startswith(tag + " "):
            try:
                return tag, json.loads(line[len(tag) + 1:])
            except json.JSONDecodeError as exc:
                err = DamagedOutput(exc.msg, exc.doc, exc.pos)
                err.args = (f"a damaged {tag} line (output line {number}: {exc.msg} at column "
                            f"{exc.colno + len(tag) + 1}): {line[:DAMAGED_EXCERPT]!r}",)
                raise err from None
    return None


def split_launches(text: str) -> list[tuple[list[Record], Record | None]]:
    """[(records, summary)] of each payload launch in a job's stdout, in order: a launch ends
    with its DONE_TAG line; a last one without it (records, or nothing at all) has summary
    None.  Terminal control sequences are dropped first; a damaged line is DamagedOutput."""
    out: list[tuple[list[Record], Record | None]] = []
    records: list[Record] = []
    for number, line in enumerate(_ANSI.sub("", text).splitlines(), 1):
        item = _tagged(number, line)
        if item is None:
            continue
        if item[0] == RESULT_TAG:
            records.append(item[1])
        else:
            out.append((records, item[1]))
            records = []
    if records or not out:
        out.append((records, None))
    return out


def parse_output(text: str) -> tuple[list[Record], Record | None]:
    """What a run printed, read back: its records (the RESULT_TAG lines, in order) and its
    summary (the last DONE_TAG line, None if it did not finish).  Terminal control sequences
    are dropped first; a damaged line is DamagedOutput."""
    runs = split_launches(text)
    summaries = [summary for _, summary in runs if summary is not None]
    return [rec for records, _ in runs for rec in records], (summaries[-1] if summaries else None)


def result_line(record: Record) -> str:
    return f"{RESULT_TAG} {json.dumps(record, sort_keys=True)}"


def done_line(summary: Record) -> str:
    return f"{DONE_TAG} {json.dumps(summary, sort_keys=True)}"


def record_value(rec: Record, key: str) -> Any:
    """One number of a record: LATENCY (the median time, us) or a record field."""
    return rec["time_us"]["median"] if key == LATENCY else rec[key]


def by_size(records: list[Record]) -> dict[int, Record]:
    return {rec["size"]: rec for rec in records}


def by_method_size(records: list[Record]) -> dict[tuple[str, int], Record]:
    return {(rec["method"], rec["size"]): rec for rec in records}


def first_error(stderr_text: str) -> str:
    """The payload's own reason from its stderr (the first ERROR_PREFIX line), or ''."""
    for line in stderr_text.splitlines():
        if ERROR_PREFIX in line:
            return line.split(ERROR_PREFIX, 1)[1].strip()
    return ""


#: perf variable -> (size in bytes, record field or LATENCY, unit)
PERF_POINTS = {
    "latency_8B": (8, LATENCY, "us"),
    "goodput_1MiB": (1 << 20, "goodput_GBps", "GB/s"),
    "goodput_64MiB": (64 << 20, "goodput_GBps", "GB/s"),
    "goodput_256MiB": (256 << 20, "goodput_GBps", "GB/s"),
    "goodput_1GiB": (1 << 30, "goodput_GBps", "GB/s"),
}
#: the bw operation's points (checks/bw.py): the time per message at 8 B (us, the record's median
#: time: bw reports per message), goodput where a window of messages streams
BW_PERF_POINTS = {
    "msgtime_8B": (8, LATENCY, "us"),
    "goodput_64MiB": PERF_POINTS["goodput_64MiB"],
    "goodput_256MiB": PERF_POINTS["goodput_256MiB"],
    "goodput_1GiB": PERF_POINTS["goodput_1GiB"],
}
COLLECTIVE_PERF_POINTS = dict(PERF_POINTS, busbw_1GiB=(1 << 30, "busbw_GBps", "GB/s"))
#: the scaling checks' points: all-to-all at 2 MiB blocks (Fig. 9), all-reduce at 1 GiB (Fig. 10)
SCALING_PERF_POINTS = {
    "goodput_2MiB": (2 << 20, "goodput_GBps", "GB/s"),
    "busbw_2MiB": (2 << 20, "busbw_GBps", "GB/s"),
    "goodput_1GiB": (1 << 30, "goodput_GBps", "GB/s"),
    "busbw_1GiB": (1 << 30, "busbw_GBps", "GB/s"),
}
#: the health sweep's points: latency at 8 B, goodput at 1 MiB and 64 MiB
HEALTH_PERF_POINTS = {k: PERF_POINTS[k] for k in ("latency_8B", "goodput_1MiB", "goodput_64MiB")}

#: Each perf variable's direction, declared with its unit (every check's perf variables carry one
#: of these units: tests/unit/test_declarations.py holds every check to it): HIGHER_IS_WORSE for a
#: time or a slowdown ratio, LOWER_IS_WORSE for a rate.  Every rule that asks "is it slower?"
#: reads it here (gpucomm.analysis.statcore.worse_sign), the report's trend and the references too.
HIGHER_IS_WORSE, LOWER_IS_WORSE = 1, -1
PERF_UNIT_DIRECTION = {
    "us": HIGHER_IS_WORSE, "ms": HIGHER_IS_WORSE, "s": HIGHER_IS_WORSE, "ns": HIGHER_IS_WORSE,
    # the noise check's ratios: victim_slowdown_* (noisy over quiet time), *_spread_* (p95 over median)
    "x": HIGHER_IS_WORSE,
    "GB/s": LOWER_IS_WORSE, "MB/s": LOWER_IS_WORSE, "B/s": LOWER_IS_WORSE,
}


#: NCCL/RCCL's INFO line of a connected channel (transport.cc: "Channel 00/0 : 0[0] -> 1[0]
#: [send] via NET/IB/0"): the peer ranks and the transport (P2P/..., SHM/..., NET/...)
_NCCL_CHANNEL = re.compile(r"Channel (\d+)/\d+ : (\d+)\[[^\]]*\] -> (\d+)\[[^\]]*\](?: \[(\w+)\])? via (\S+)")


def nccl_channels(text: str) -> list[dict[str, Any]]:
    """Every channel connection an NCCL/RCCL debug log (NCCL_DEBUG=INFO) reports, in order:
    dicts of channel, src, dst, direction ('send', 'receive' or ''), transport."""
    return [{"channel": int(m[1]), "src": int(m[2]), "dst": int(m[3]), "direction": m[4] or "",
             "transport": m[5]} for m in _NCCL_CHANNEL.finditer(text)]


def read_run(text: str) -> tuple[dict[int, Record], Record | None]:
    """({size: record}, summary) of a run's output."""
    records, summary = parse_output(text)
    return by_size(records), summary


#: upper bounds: a count or a time past these is a typo, not a benchmark
MAX_COUNT = 10**9
MAX_SECONDS = 7 * 24 * 3600
MAX_GBPS = 1e6

#: PayloadOption.kind -> (number type, minimum, maximum, whether the minimum is excluded): what
#: the payload's argparse types (payload.cli) and the checks' -S checks (rfm.GpucommCheck) take
NUMBER_KINDS: dict[str, tuple[type, float, float, bool]] = {
    "count": (int, 1, MAX_COUNT, False), "count0": (int, 0, MAX_COUNT, False),
    "seconds": (float, 0, MAX_SECONDS, False), "seconds+": (float, 0, MAX_SECONDS, True),
    "GBps": (float, 0, MAX_GBPS, False), "fraction": (float, 0, 1, False)}


def number_problem(value: float, kind: str) -> str | None:
    """Why ``value`` is not a number of ``kind`` (NUMBER_KINDS), or None."""
    _, low, high, strict = NUMBER_KINDS[kind]
    if not math.isfinite(value):
        return "must be a finite number"
    if not (value > low if strict else value >= low):
        return f"must be {'>' if strict else '>='} {low:g}"
    if value > high:
        return f"must be <= {high:g}"
    return None


def one_of(choices: tuple[str, ...]) -> str:
    """'a, b or c'."""
    return f"{', '.join(choices[:-1])} or {choices[-1]}" if len(choices) > 1 else choices[0]


@dataclass(frozen=True)
class PayloadOption:
    """One option of every payload operation's command line (``python -m gpucomm OP``): one row
    of PAYLOAD_OPTIONS generates the payload's argparse option (payload.cli) and, where it has a
    ``variable``, the checks' ``-S`` variable and its part of the command line
    (rfm.GpucommCheck.command)."""
    flag: str
    help: str
    #: the argparse type (payload.cli's number types): count (>= 1), count0 (>= 0), seconds
    #: (>= 0), seconds+ (> 0), GBps (>= 0), fraction (0 to 1), methods; None: the text itself
    kind: str | None = None
    default: object = None
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    #: argparse's dest where it is not the flag's ("json_path" for --json)
    dest: str | None = None
    #: "store_true" for a switch
    action: str | None = None
    required: bool = False
    #: the checks' variable that sets it: its name, its type (integer, real, text: rfm.setvars)
    #: and the value meaning "the payload's default" (the option is then left out)
    variable: str | None = None
    var_type: str | None = None
    unset: object = None
    #: the operations that take it (None: every one)
    ops: tuple[str, ...] | None = None
    #: the check writes it itself (--sizes, quoted; the soak's pair, rfm.base.soak_options), not
    #: from its variable alone
    custom: bool = False

    @property
    def name(self) -> str:
        """argparse's dest."""
        return self.dest or self.flag[2:].replace("-", "_")

    def problem(self, value: Any) -> str | None:
        """Why a check's variable value is not one this option takes (``-S NAME=VALUE``), or
        None: its ``unset`` value (the payload's default) always is, else one of its choices or a
        number of its kind; below the unset value, the bound named is the unset value's."""
        if value == self.unset:
            return None
        if self.choices:
            return None if value in self.choices else f"choose {one_of(self.choices)}"
        if self.kind not in NUMBER_KINDS:
            return None
        why = number_problem(value, self.kind)
        if why is None or not math.isfinite(value) or not isinstance(self.unset, (int, float)):
            return why
        if value < self.unset:
            return f"must be >= {self.unset:g}"
        if value <= NUMBER_KINDS[self.kind][1]:  # between the unset value and the kind's minimum
            return f"must be {self.unset:g} (the payload's default) or {why.removeprefix('must be ')}"
        return why

    def command_line(self, value: object, op: str) -> list[str]:
        """This option's part of a check's payload command line for the variable's ``value``
        ([] where it is unset, or not an option of ``op``)."""
        if self.custom or value == self.unset or (self.ops is not None and op not in self.ops):
            return []
        return [self.flag, f"{value:g}" if self.var_type == "real" else str(value)]


#: every payload operation's common options, in the order of its --help and of a check's
#: command line; the operations' own (the aggressor's, the pair matrix's --pairs) are
#: payload.cli's
PAYLOAD_OPTIONS = (
    PayloadOption("--method", f"one of: {', '.join(METHODS)}; several (comma-separated, or 'all') run in "
                  "turn in one launch, each skipped with its reason where this machine cannot do it",
                  kind="methods", required=True, metavar="METHOD[,METHOD...]"),
    PayloadOption("--sizes", "message sizes: SIZE or MIN:MAX[:FACTOR], comma-separated; binary units K, M, G "
                  "(default 1:1G)", default="1:1G", variable="sizes", var_type="text", unset="1:1G", custom=True),
    PayloadOption("--fit-memory", "the sizes are a default sweep, not the user's: stop it at the largest size "
                  "the rank's memory share (its cgroup's, its GPU's) allows, saying so (a note, the records' "
                  f"'{CAPPED_AT}'), instead of failing; sizes given explicitly that cannot fit stay an error",
                  action="store_true"),
    PayloadOption("--iters", "timed iterations per size (default: 1000 up to 64 KiB, 200 up to 1 MiB, "
                  "50 up to 64 MiB, 20 above)", kind="count", variable="iters", var_type="integer", unset=0),
    PayloadOption("--warmup", "untimed iterations per size (default: a tenth of --iters, at least 2)",
                  kind="count0", variable="warmup", var_type="integer", unset=-1),
    PayloadOption("--batch", "iterations per timed sample, run back to back between two barriers "
                  "(default: 20 up to 64 KiB, 4 up to 1 MiB, 5 above; at least 10 samples)",
                  kind="count", metavar="N", variable="batch", var_type="integer", unset=0),
    PayloadOption("--budget", "timed seconds per size: fewer iterations than --iters where one is slow "
                  "(estimated from the last warm-up iteration; at least 10)",
                  kind="seconds+", metavar="SECONDS", variable="budget", var_type="real", unset=0.0),
    PayloadOption("--precision-target", "after a size's iterations, add blocks of samples while the median's "
                  "95-percent confidence interval is wider than FRACTION of it each way (relative half-width) "
                  f"and the size's timed seconds are under its cap (--budget, else {PRECISION_CAP_S:g} s); 0: "
                  f"off, the iterations only (default: off where --iters is given, else "
                  f"{PRECISION_TARGET_LATENCY:g} up to 64 KiB, {PRECISION_TARGET_BANDWIDTH:g} above; records: "
                  f"'{PRECISION_FIELD}', its '{PREC_STOPPED}' says why the sampling stopped)",
                  kind="fraction", metavar="FRACTION", variable="precision_target", var_type="real", unset=-1.0),
    PayloadOption("--graph", "capture each sample's iterations into a CUDA/HIP graph and time its launch "
                  "(ccl only); auto: where the method allows it, else the plain loop",
                  choices=("auto", "on", "off"), default="auto", variable="graph", var_type="text", unset="auto"),
    PayloadOption("--window", "messages sent back to back before the receiver's acknowledgement "
                  "(osu_bw's -W; default 64)", kind="count", metavar="W", variable="window",
                  var_type="integer", unset=0, ops=(BW,)),
    PayloadOption("--loop", "the MPI methods' timed loop (ping-pong, multi-pingpong, bw): numba-mpi "
                  "compiles it (pip install gpucomm[fast]), mpi4py runs it from Python; auto: numba-mpi where "
                  "it loads, else mpi4py, the record saying why (default: "
                  f"${LOOP_ENV}, else auto)", choices=LOOP_CHOICES, variable="loop", var_type="text",
                  unset=LOOP_AUTO),
    PayloadOption("--backend", "array backend (auto: numpy for host, cupy for the GPU methods)",
                  choices=("auto", "numpy", "cupy"), default="auto"),
    PayloadOption("--json", "write all records to FILE", metavar="FILE", dest="json_path"),
    PayloadOption("--max-bandwidth", "nominal link limit in GB/s; a faster result is an error (default: "
                  "detect; 0: off)", kind="GBps", metavar="GBPS"),
    PayloadOption("--timer", "per-iteration timer: host clock after synchronisation, or device events (ccl, "
                  "and ipc-copy's point-to-point with stream flags); auto: device where the method allows it, "
                  "host otherwise", choices=("auto", "host", "device"), default="auto"),
    PayloadOption("--ranks-per-node", "treat consecutive groups of K ranks as nodes (a multi-node run "
                  "emulated on one machine); default: the MPI shared-memory domains", kind="count", metavar="K"),
    PayloadOption("--timeout", "end the run (every rank, exit 124) if it lasts longer; 0 or unset: no limit",
                  kind="seconds", metavar="SECONDS"),
    PayloadOption("--allow-shared-gpu", "allow two ranks of a node on one GPU", action="store_true"),
    PayloadOption("--validate-every", "soak: also check the received data of every timed sample that holds a "
                  "multiple of N among its iterations (its last iteration, outside the timed region: N <= "
                  "--batch checks every sample, N a multiple of the batch every Nth iteration), count the "
                  "wrong samples in the record's 'wrong' and fail naming the first (exit 4); a size with "
                  "fewer than N iterations is an error; default: once per size, after the last sample",
                  kind="count", metavar="N", variable="validate_every", var_type="integer",
                  unset=0, custom=True),
    PayloadOption("--validate-sizes", "the sizes --validate-every applies to, in --sizes' syntax; each must be "
                  "swept (default: every size)", metavar="SIZES", variable="validate_sizes", var_type="text",
                  unset="", custom=True),
    PayloadOption("--quiet", "no human table, JSON records only", action="store_true"),
    PayloadOption("--debug", "show tracebacks of internal errors", action="store_true"),
)
