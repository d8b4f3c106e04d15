"""A check's run records every perf variable's precision (a ReFrame plugin of every payload check).

``precision`` (contract.PRECISION_FIELD, loggable: in every test case of the session's report)
maps each perf variable whose value is one payload record's field to that record's precision
(its ``precision`` field: metrics.median_precision_us and why the sampling stopped) in the perf
variable's own unit: samples, blocks, ci95 ([low, high], the median's 95 % interval), p10 (the
value at the time's 10 % quantile: for a bandwidth, a high one), block_spread, rel_se (the
standard error of the log of the value, the same in every unit) and stopped.  A time is
proportional to the record's time, a rate (a unit of contract.LOWER_IS_WORSE) inversely: the
interval of a bandwidth is that of the time inverted, so that low <= value <= high.

A check names its perf variables' records with ``precision_records`` (none by default: a native
tool's, a value made of several records); a perf variable without a record's precision is absent,
which readers take as "precision unknown".
"""

import math
from typing import Any, Optional

from reframe.core.builtins import run_after, variable
from reframe.core.pipeline import RegressionTestPlugin

from ..contract import (
    LOWER_IS_WORSE,
    PERF_UNIT_DIRECTION,
    PREC_BLOCK_SPREAD,
    PREC_BLOCKS,
    PREC_CI,
    PREC_P10,
    PREC_REL_SE,
    PREC_SAMPLES,
    PREC_STOPPED,
    PRECISION_FIELD,
    Record,
    record_value,
)


def _finite(x: Optional[float]) -> Optional[float]:
    return float(x) if x is not None and math.isfinite(x) else None


def precision_in_unit(rec: Record, key: str, unit: str) -> Optional[dict[str, Any]]:
    """A record's precision (its PRECISION_FIELD, times in us) for the perf variable that reads
    its ``key`` (contract.record_value) in ``unit``; None where the record has none."""
    prec = rec.get(PRECISION_FIELD)
    median = (rec.get("time_us") or {}).get("median")
    if not prec or not median or median <= 0:
        return None
    value = float(record_value(rec, key))
    rate = PERF_UNIT_DIRECTION.get(unit) == LOWER_IS_WORSE

    def at(t: float) -> Optional[float]:  # the perf variable's value had the time been t us
        if rate:
            return _finite(value * median / t) if t > 0 else None
        return _finite(value * t / median)

    low, high = prec[PREC_CI]
    return {PREC_SAMPLES: int(prec[PREC_SAMPLES]), PREC_BLOCKS: int(prec[PREC_BLOCKS]),
            PREC_CI: [at(high), at(low)] if rate else [at(low), at(high)], PREC_P10: at(prec[PREC_P10]),
            PREC_BLOCK_SPREAD: _finite(prec.get(PREC_BLOCK_SPREAD)), PREC_REL_SE: _finite(prec.get(PREC_REL_SE)),
            PREC_STOPPED: prec.get(PREC_STOPPED)}


class PrecisionRecord(RegressionTestPlugin):
    """Sets ``precision`` after the performance stage (see the module's docstring)."""

    #: perf variable -> its precision (contract.PRECISION_FIELD; the interface of docs/payload.md)
    precision = variable(dict, value={}, loggable=True)

    def precision_records(self) -> dict[str, tuple[Record, str, str]]:
        """{perf variable: (its payload record, the record's field, the variable's unit)}, for
        the perf variables whose value is one record's field; none here."""
        return {}

    @run_after("performance")
    def record_precision(self):
        wanted = set(getattr(self, "perf_variables", None) or ())
        try:
            plan = self.precision_records()
        except (OSError, ValueError, KeyError, TypeError):  # no output, a damaged line: unknown
            plan = {}
        out = {}
        for name, (rec, key, unit) in plan.items():
            found = precision_in_unit(rec, key, unit) if name in wanted else None
            if found:
                out[name] = found
        self.precision = out
