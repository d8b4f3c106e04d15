"""The one contract between the payload and whoever reads its output (checks, report, compare).

The payload prints one ``GPUCOMM-RESULT {json}`` line per size (a *record*), ends with one
``GPUCOMM-DONE {json}`` line (its *summary*: ok, per-method status, error), writes both to the
``--json`` file the checks keep (RESULTS_FILE), and says an error as one ``gpucomm: error: ...``
line on stderr.  Perf variables are named after *points* of a sweep: a size and a record field
(``latency`` = the median time in us).
"""

import json
import re

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
#: the record field a perf point may name instead of a record key: the median time (us)
LATENCY = "latency"
#: record and meta keys of the MPI methods: which timed loop ran (constants.LOOPS) and, where it
#: was mpi4py's, why not the compiled one (payload.fastloop)
TIMED_LOOP, TIMED_LOOP_NOTE = "timed_loop", "timed_loop_note"
#: a soak's record fields (--validate-every N, payload.soak): N, the iterations checked, and
#: those whose received data was wrong (nccl-tests' ``#wrong``, counted per iteration)
VALIDATE_EVERY, CHECKED, WRONG = "validate_every", "checked", "wrong"


#: terminal control sequences another rank's process may write into the shared output without
#: a newline (colorama's reset at exit, which numba sets up: 21-every-method), so that the next
#: line of rank 0 starts with it
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class DamagedOutput(json.JSONDecodeError):
    """A RESULT_TAG or DONE_TAG line whose JSON does not parse (a rank killed mid-print, two
    processes' output run together); its message is one line: the tag, where, and a prefix."""


#: characters of a damaged line its message shows
DAMAGED_EXCERPT = 80


def _tagged(number, line):
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


def split_launches(text):
    """[(records, summary)] of each payload launch in a job's stdout, in order: a launch ends
    with its DONE_TAG line; a last one without it (records, or nothing at all) has summary
    None.  Terminal control sequences are dropped first; a damaged line is DamagedOutput."""
    out, records = [], []
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


def parse_output(text):
    """What a run printed, read back: its records (the RESULT_TAG lines, in order) and its
    summary (the last DONE_TAG line, None if it did not finish).  Terminal control sequences
    are dropped first; a damaged line is DamagedOutput."""
    runs = split_launches(text)
    summaries = [summary for _, summary in runs if summary is not None]
    return [rec for records, _ in runs for rec in records], (summaries[-1] if summaries else None)


def result_line(record):
    return f"{RESULT_TAG} {json.dumps(record, sort_keys=True)}"


def done_line(summary):
    return f"{DONE_TAG} {json.dumps(summary, sort_keys=True)}"


def record_value(rec, key):
    """One number of a record: LATENCY (the median time, us) or a record field."""
    return rec["time_us"]["median"] if key == LATENCY else rec[key]


def by_size(records):
    return {rec["size"]: rec for rec in records}


def by_method_size(records):
    return {(rec["method"], rec["size"]): rec for rec in records}


def first_error(stderr_text):
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


#: NCCL/RCCL's INFO line of a connected channel (transport.cc: "Channel 00/0 : 0[0] -> 1[0]
#: [send] via NET/IB/0"): the peer ranks and the transport (P2P/..., SHM/..., NET/...)
_NCCL_CHANNEL = re.compile(r"Channel (\d+)/\d+ : (\d+)\[[^\]]*\] -> (\d+)\[[^\]]*\](?: \[(\w+)\])? via (\S+)")


def nccl_channels(text):
    """Every channel connection an NCCL/RCCL debug log (NCCL_DEBUG=INFO) reports, in order:
    dicts of channel, src, dst, direction ('send', 'receive' or ''), transport."""
    return [{"channel": int(m[1]), "src": int(m[2]), "dst": int(m[3]), "direction": m[4] or "",
             "transport": m[5]} for m in _NCCL_CHANNEL.finditer(text)]


def read_run(text):
    """({size: record}, summary) of a run's output."""
    records, summary = parse_output(text)
    return by_size(records), summary


# -- a process by pid and start time (a pid alone may be another process's by then) ---------

def _start_time(pid):
    """The start time of process ``pid`` (clock ticks since boot, /proc/PID/stat field 22), or
    None where it does not run (gone, or a zombie: killed, not yet reaped by its parent)."""
    try:
        with open(f"/proc/{pid}/stat") as fp:
            fields = fp.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if len(fields) < 20 or fields[0] in ("Z", "X") else fields[19]


def process_token(pid):
    """"PID:START" of a running process (what WATCH_PID_ENV holds)."""
    return f"{pid}:{_start_time(pid) or ''}"


def process_alive(token):
    """Whether the process of ``token`` (process_token) still runs; True for a token that says
    nothing (no pid): no process to outlive."""
    pid, _, start = str(token).partition(":")
    if not pid.isdigit():
        return True
    now = _start_time(int(pid))
    return now is not None and (not start or now == start)
