"""nccl-tests / rccl-tests: their command-line options (nccl_tests_options: the one builder, for
the checks and bench/compare alike) and their output: the 2.x text table and the ``-J`` JSON
file.

Text rows: size count type redop root | time algbw busbw #wrong (out-of-place) | time algbw busbw
#wrong (in-place); ``#wrong`` may be ``N/A`` (sendrecv/alltoall in-place).  The footer
"Out of bounds values : N OK|FAILED" is the tool's own validation summary.  Times are means
over the tool's iterations (us), bandwidths GB/s (1e9 B/s).

Records follow gpucomm's convention: for all-to-all and all-gather the ``size`` is the block per
peer (the tool's size / ranks), the tool's own size is kept as ``tool_size``; goodput is the
paper's (metrics.goodput_GBps) from the tool's time where the paper defines it, else algbw.
"""

import json
import re

from ..errors import GpucommError
from ..metrics import goodput_GBps

#: tool test name -> gpucomm op
OPS = {"sendrecv": "sendrecv", "all_reduce": "allreduce", "alltoall": "alltoall",
       "all_gather": "allgather", "reduce_scatter": "reducescatter", "broadcast": "broadcast",
       "reduce": "reduce"}
_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(-?\d+)\s+(.*)$")
# nccl-tests: "# nccl-tests version 2.19.6 ..."; rccl-tests: "rccl-tests: Version develop:448c4c7"
_HEADER = re.compile(r"^#?\s*(nccl|rccl)-tests:?\s+version\s*(\S*)", re.I | re.M)
_TEST = re.compile(r"Collective test starting:\s*(\w+?)_perf")
_NGPUS = re.compile(r"nThread\s+(\d+)\s+nGpus\s+(\d+)")
_RANK = re.compile(r"^#\s+Rank\s+\d+\s+(?:Group|Pid)", re.M)
_OOB = re.compile(r"Out of bounds values\s*:\s*(\d+)\s+(OK|FAILED)", re.I)


#: the operations whose tool size is the whole buffer: a block per peer (gpucomm's size) for
#: each rank
WHOLE_BUFFER_OPS = ("alltoall", "allgather")


def nccl_tests_options(test, lo, hi, nranks, gpus=1, iters=0, warmup=-1):
    """The options of one run of ``test`` (sendrecv, all_reduce, ...) over gpucomm's sizes
    ``lo``..``hi`` (bytes; for all-to-all and all-gather a block per peer, the tool's size that
    times ``nranks``): doubling (``-f 2``), ``gpus`` per process (``-g``), the tool's check of
    the data on (``-c 1``); ``-n iters`` and ``-w warmup`` where given (> 0, >= 0), else the
    tool's defaults."""
    scale = nranks if OPS.get(test, test) in WHOLE_BUFFER_OPS else 1
    opts = ["-b", str(lo * scale), "-e", str(hi * scale), "-f", "2", "-g", str(gpus), "-c", "1"]
    if iters > 0:
        opts += ["-n", str(iters)]
    if warmup >= 0:
        opts += ["-w", str(warmup)]
    return opts


def _num(tok):
    return None if tok.upper() == "N/A" else float(tok)


def _block(op, size, nranks):
    return size // nranks if op in WHOLE_BUFFER_OPS else size


def _record(op, tool_size, nranks, oop, ip, tool):
    size = _block(op, tool_size, nranks)
    t = oop["time"]
    if op in ("allreduce", "alltoall"):
        goodput = goodput_GBps(op, size, t * 1e-6, nranks)
    else:
        goodput = oop["algbw"]
    wrong = [w for w in (oop["wrong"], ip["wrong"]) if w is not None]
    return {"op": op, "method": tool, "size": size, "tool_size": tool_size, "nranks": nranks,
            "time_us": {"mean": t, "median": t}, "goodput_GBps": goodput, "algbw_GBps": oop["algbw"],
            "busbw_GBps": oop["busbw"], "in_place": ip, "wrong": sum(wrong) if wrong else None,
            "validated": bool(wrong) and sum(wrong) == 0}


def parse_nccl_tests(text, nranks=None):
    """Parse nccl-tests/rccl-tests stdout: (meta, records).  ``nranks`` defaults to the number
    of '# Rank' lines (every GPU of every process)."""
    head = _HEADER.search(text)
    test = _TEST.search(text)
    if test is None and head is None:
        raise GpucommError("not nccl-tests/rccl-tests output (no version or 'Collective test' line)")
    tool = f"{head.group(1).lower()}-tests" if head else "nccl-tests"
    name = test.group(1) if test else None
    op = OPS.get(name, name)
    ranks = nranks or len(_RANK.findall(text)) or None
    if ranks is None:
        m = _NGPUS.search(text)
        ranks = int(m.group(1)) * int(m.group(2)) if m else 1
    records = []
    for line in text.splitlines():
        m = _ROW.match(line)
        if not m:
            continue
        cols = m.group(6).split()
        if len(cols) < 8 or int(m.group(1)) == 0:  # 0 B: a size the tool rounded away
            continue
        try:
            oop = {"time": float(cols[0]), "algbw": float(cols[1]), "busbw": float(cols[2]),
                   "wrong": _num(cols[3])}
            ip = {"time": float(cols[4]), "algbw": float(cols[5]), "busbw": float(cols[6]),
                  "wrong": _num(cols[7])}
        except ValueError:
            continue
        records.append(_record(op, int(m.group(1)), ranks, oop, ip, tool))
    oob = _OOB.search(text)
    meta = {"tool": tool, "version": head.group(2) if head else None, "test": name, "op": op,
            "nranks": ranks, "out_of_bounds": int(oob.group(1)) if oob else None,
            "out_of_bounds_ok": (oob.group(2).upper() == "OK") if oob else None}
    return meta, records


def parse_nccl_tests_json(text, nranks=None, test=None):
    """Parse the ``-J FILE`` output of nccl-tests >= 2.17: (meta, records)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise GpucommError(f"nccl-tests JSON unreadable: {exc}") from None
    cfg = data.get("config", {})
    ranks = nranks or max(len(cfg.get("devices", [])), cfg.get("ngpus", 1) * cfg.get("nthreads", 1))
    name = test
    if name is None:
        exe = next((a for a in data.get("args", []) if a.endswith("_perf")), "")
        name = exe.rsplit("/", 1)[-1][:-len("_perf")] if exe else None
    op = OPS.get(name, name)
    records = []
    for row in data.get("results", []):
        oop, ip = row["out_of_place"], row.get("in_place") or {}
        conv = lambda d: {"time": d.get("time"), "algbw": d.get("alg_bw"), "busbw": d.get("bus_bw"),  # noqa: E731
                          "wrong": d.get("nwrong")}
        records.append(_record(op, int(row["size"]), ranks, conv(oop), conv(ip), "nccl-tests"))
    oob = data.get("out_of_bounds", {})
    meta = {"tool": "nccl-tests", "version": data.get("version"), "test": name, "op": op, "nranks": ranks,
            "nccl_version": data.get("nccl_version"), "out_of_bounds": oob.get("count"),
            "out_of_bounds_ok": str(oob.get("okay")).lower() == "true" if oob else None}
    return meta, records
