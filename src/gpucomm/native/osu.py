"""OSU micro-benchmarks output (5.x and 7.x): latency, bandwidth, bi-bandwidth, collectives,
``-f`` full statistics, ``-c`` validation column, NCCL (xccl) variants.

The table starts at the header line '# Size ...' (column names separated by two or more
blanks); each data row is the size followed by one value per column ('Pass'/'Fail' for
validation).  OSU's MB/s are 1e6 B/s.  Point-to-point latency is OSU's half round trip, like our
ping-pong; collectives report the average latency over ranks.
"""

import re

from ..errors import GpucommError
from ..metrics import busbw_GBps, goodput_GBps

_TITLE = re.compile(r"^#\s*OSU\s+(.*?)\s+Test(?:\s+v(\S+))?\s*$", re.M)


def op_of(benchmark):
    """osu_latency -> pingpong, osu_bw -> bw, osu_bibw -> bibw, osu_allreduce -> allreduce,
    osu_xccl_latency -> pingpong, ..."""
    name = benchmark.rsplit("/", 1)[-1]
    name = re.sub(r"^osu_(xccl_|nccl_)?", "", name)
    return {"latency": "pingpong"}.get(name, name)


def parse_osu(text, benchmark, nranks=2):
    """(meta, records) from one OSU benchmark's stdout."""
    lines = text.splitlines()
    hdr = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("# Size")), None)
    if hdr is None:
        raise GpucommError(f"no '# Size' table in the output of {benchmark}")
    cols = [c.strip() for c in re.split(r"\s{2,}", lines[hdr].strip()[len("# Size"):].strip()) if c.strip()]
    title = _TITLE.search(text)
    op = op_of(benchmark)
    records = []
    for ln in lines[hdr + 1:]:
        tok = ln.split()
        if not tok or not tok[0].isdigit():
            if tok and not ln.startswith("#"):
                break  # the table ended
            continue
        row = dict(zip(cols, tok[1:]))
        records.append(_record(op, int(tok[0]), row, benchmark, nranks))
    meta = {"tool": "osu", "benchmark": benchmark, "op": op, "columns": cols,
            "title": title.group(1) if title else None, "version": title.group(2) if title else None,
            "device_buffers": _device_buffers(text, title, benchmark),
            "validation": any("Validation" in c for c in cols)}
    return meta, records


def _device_buffers(text, title, benchmark):
    """Whether the run used accelerator buffers: OSU 7 prints 'Buffer on DEVICE' for
    point-to-point runs whose -d names both sides, and an accelerator in the title otherwise
    ('MPI-CUDA Latency', 'NCCL-CUDA Allreduce Latency', 'MPI-ROCM ...'); the NCCL/RCCL
    benchmarks always use device buffers."""
    if "DEVICE" in text[:2000] or re.search(r"(?:xccl|nccl|rccl)_", benchmark.rsplit("/", 1)[-1]):
        return True
    return bool(title and re.search(r"-(?:CUDA|ROCM|ROCm|OPENACC|SYCL)\b", title.group(1)))


def _value(row, *prefixes):
    for key, val in row.items():
        if any(key.startswith(p) for p in prefixes):
            try:
                return float(val)
            except ValueError:
                return None
    return None


def _record(op, size, row, benchmark, nranks):
    rec = {"op": op, "method": "osu", "benchmark": benchmark, "size": size, "nranks": nranks, "columns": row}
    check = next((v for k, v in row.items() if k.startswith("Validation")), None)
    rec["validated"] = None if check is None else check.lower().startswith("pass")
    bw = _value(row, "Bandwidth")
    if bw is not None:  # MB/s
        rec["goodput_GBps"] = rec["busbw_GBps"] = bw / 1e3
        rec["time_us"] = {"mean": size / (bw * 1e6) * 1e6 if bw else None}
        rec["time_us"]["median"] = rec["time_us"]["mean"]
        return rec
    lat = _value(row, "Avg Latency", "Latency")
    rec["time_us"] = {"mean": lat, "median": lat, "min": _value(row, "Min Latency"),
                      "max": _value(row, "Max Latency")}
    rec["iters"] = _value(row, "Iterations")
    if lat and size:
        t = lat * 1e-6
        if op in ("pingpong", "allreduce", "alltoall"):
            rec["goodput_GBps"] = goodput_GBps(op, size, t, nranks)
            rec["busbw_GBps"] = busbw_GBps(op, size, t, nranks)
        else:
            rec["goodput_GBps"] = rec["busbw_GBps"] = size / t / 1e9
    else:
        rec["goodput_GBps"] = rec["busbw_GBps"] = 0.0
    return rec
