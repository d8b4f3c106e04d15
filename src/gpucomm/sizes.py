"""Message sizes: parsing "1:1G"-style sweeps and naming sizes the way perf variables do."""

import re

from .errors import GpucommError

_UNITS = {"": 1, "B": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_SIZE_RE = re.compile(r"^\s*(\d+)\s*([KMGT]?)(I?B)?\s*$", re.IGNORECASE)


def parse_size(text):
    """Parse one size: ``8``, ``8B``, ``4K``, ``4KiB``, ``64M``, ``1G`` (binary units)."""
    m = _SIZE_RE.match(str(text))
    if not m:
        raise GpucommError(f"bad size {text!r}: expected a number with an optional unit "
                           "K, M, G (binary: 1K = 1024 bytes), e.g. 8, 64K, 1MiB, 1G")
    value = int(m.group(1)) * _UNITS[m.group(2).upper()]
    if value <= 0:
        raise GpucommError(f"bad size {text!r}: sizes must be at least 1 byte")
    return value


def parse_sizes(spec):
    """Parse a sweep: comma-separated items, each ``SIZE`` or ``MIN:MAX[:FACTOR]``.

    ``1:1G`` is every power of two from 1 B to 1 GiB; ``8:1M:4`` multiplies by 4.
    Returns a sorted list of distinct sizes in bytes.
    """
    if spec is None or not str(spec).strip():
        raise GpucommError("no sizes given: use e.g. --sizes 1:1G or --sizes 8,1M,64M")
    sizes = set()
    for item in str(spec).split(","):
        parts = item.split(":")
        if len(parts) == 1:
            sizes.add(parse_size(parts[0]))
            continue
        if len(parts) not in (2, 3):
            raise GpucommError(f"bad size range {item!r}: expected MIN:MAX or MIN:MAX:FACTOR")
        lo, hi = parse_size(parts[0]), parse_size(parts[1])
        factor = 2
        if len(parts) == 3:
            if not parts[2].strip().isdigit() or int(parts[2]) < 2:
                raise GpucommError(f"bad size range {item!r}: FACTOR must be an integer >= 2")
            factor = int(parts[2])
        if lo > hi:
            raise GpucommError(f"bad size range {item!r}: MIN is larger than MAX")
        s = lo
        while s <= hi:
            sizes.add(s)
            s *= factor
    return sorted(sizes)


def size_label(nbytes):
    """``8`` -> ``8B``, ``1048576`` -> ``1MiB``, ``3000`` -> ``3000B`` (used in perf variable names)."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale}{unit}"
    return f"{nbytes}B"


def default_iters(size):
    """Iterations per size: many for latency-bound sizes, fewer where one iteration is long."""
    if size <= 64 << 10:
        return 1000
    if size <= 1 << 20:
        return 200
    if size <= 64 << 20:
        return 50
    return 20


def default_batch(size, iters):
    """Iterations per timed sample.  Small messages run back to back between two barriers, as
    OSU and nccl-tests time their loops: a barrier's skew (ranks leave it up to a microsecond
    apart) and the timer's own cost are paid once per sample instead of once per iteration.
    Large messages run a few per sample too: a barrier, a stream synchronisation and the timer
    in every sample cost about 7 us, 4 % of a 64 MiB NVLink transfer.  At least 10 samples
    remain for the spread."""
    batch = 20 if size <= 64 << 10 else 4 if size <= 1 << 20 else 5
    return max(1, min(batch, iters // 10))
