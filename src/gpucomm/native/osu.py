"""OSU micro-benchmarks: their command-line options (osu_options: the one builder, for the
checks and bench/compare alike) and their output (5.x and 7.x): latency, bandwidth,
bi-bandwidth, collectives, ``-f`` full statistics, ``-c`` validation column, NCCL (xccl)
variants.

The table starts at the header line '# Size ...' (column names separated by two or more
blanks); each data row is the size followed by one value per column ('Pass'/'Fail' for
validation).  OSU's MB/s are 1e6 B/s.  Point-to-point latency is OSU's half round trip, like our
ping-pong; collectives report the average latency over ranks.
"""

import re

from ..constants import ALLREDUCE, ALLTOALL, COLLECTIVES, PINGPONG
from ..errors import GpucommError
from ..metrics import busbw_GBps, goodput_GBps

_TITLE = re.compile(r"^#\s*OSU\s+(.*?)\s+Test(?:\s+v(\S+))?\s*$", re.M)
_CCL_BENCHMARK = re.compile(r"^osu_(xccl|nccl|rccl)_")

#: OSU's default cap on a collective's buffers (-M raises it); OSU skips larger sizes silently
MEM_LIMIT = 512 << 20


def op_of(benchmark):
    """osu_latency -> pingpong, osu_bw -> bw, osu_bibw -> bibw, osu_allreduce -> allreduce,
    osu_xccl_latency -> pingpong, ..."""
    name = benchmark.rsplit("/", 1)[-1]
    name = re.sub(r"^osu_(xccl_|nccl_)?", "", name)
    return {"latency": PINGPONG}.get(name, name)


def is_ccl_benchmark(benchmark):
    """Whether ``benchmark`` is one of OSU's NCCL/RCCL benchmarks (osu_xccl_*): device buffers
    always, no validation of their own, no datatype option."""
    return bool(_CCL_BENCHMARK.match(benchmark.rsplit("/", 1)[-1]))


def osu_options(benchmark, lo, hi, iters=0, warmup=-1, window=0, nranks=2, validate=False,
                device=""):
    """The options of one run of ``benchmark`` over the sizes ``lo``..``hi`` (bytes):

    * ``-m lo:hi``; ``-W window`` where given (osu_bw's messages in flight); ``-i iters`` and
      ``-x warmup`` where given (> 0, >= 0), else OSU's defaults;
    * a collective: ``-f`` (full statistics: the ranks' min, max and average) and ``-M`` where
      its buffers pass MEM_LIMIT (an all-to-all's hold a block for each of ``nranks``);
    * ``validate``: ``-c`` (OSU >= 7 checks the data on the CPU; the NCCL/RCCL benchmarks have
      no check); the MPI all-reduce sums floats (``-T mpi_float``, as the payload: MPI_CHAR
      sums overflow);
    * ``device`` (cuda, rocm): device buffers, ``-d device``, on both sides (``D D``) for a
      point-to-point benchmark; the NCCL/RCCL benchmarks use device buffers without it."""
    op, ccl = op_of(benchmark), is_ccl_benchmark(benchmark)
    opts = ["-m", f"{lo}:{hi}"]
    if window > 0:
        opts += ["-W", str(window)]
    if iters > 0:
        opts += ["-i", str(iters)]
    if warmup >= 0:
        opts += ["-x", str(warmup)]
    if op in COLLECTIVES:
        opts += ["-f"]
        need = hi * (nranks if op == ALLTOALL else 1)
        if need > MEM_LIMIT:
            opts += ["-M", str(need)]
    if ccl:
        return opts
    if validate:
        opts += ["-c"]
    if op == ALLREDUCE:
        opts += ["-T", "mpi_float"]
    if device:
        opts += ["-d", device] + ([] if op in COLLECTIVES else ["D", "D"])
    return opts


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
    if "DEVICE" in text[:2000] or is_ccl_benchmark(benchmark):
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
