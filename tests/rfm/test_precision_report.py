"""A record's precision in its perf variable's unit (rfm.precision.precision_in_unit): a time as
the record's, a bandwidth's interval the time's inverted; the ReFrame runs of test_local_reframe
and test_health check the report's ``precision`` itself (reframe_helpers.assert_precision)."""

import pytest

from gpucomm.contract import LATENCY, PRECISION_FIELD, STOP_CAP
from gpucomm.rfm.precision import precision_in_unit

RECORD = {"size": 1 << 20, "time_us": {"median": 100.0}, "goodput_GBps": 10.0, "busbw_GBps": 15.0,
          PRECISION_FIELD: {"samples": 200, "blocks": 5, "ci95": [98.0, 104.0], "p10": 95.0,
                            "block_spread": 0.01, "rel_se": 0.0076, "stopped": STOP_CAP}}


def test_a_time_keeps_the_records_figures():
    p = precision_in_unit(RECORD, LATENCY, "us")
    assert p["ci95"] == [98.0, 104.0] and p["p10"] == 95.0
    assert (p["samples"], p["blocks"], p["stopped"]) == (200, 5, STOP_CAP)
    assert p["block_spread"] == 0.01 and p["rel_se"] == 0.0076


@pytest.mark.parametrize("key,value", [("goodput_GBps", 10.0), ("busbw_GBps", 15.0)])
def test_a_bandwidth_inverts_the_time(key, value):
    p = precision_in_unit(RECORD, key, "GB/s")
    assert p["ci95"] == pytest.approx([value * 100 / 104, value * 100 / 98])
    assert p["ci95"][0] < value < p["ci95"][1]
    assert p["p10"] == pytest.approx(value * 100 / 95) and p["p10"] > value
    assert p["rel_se"] == 0.0076  # of the log: the same in every unit


def test_no_precision_is_unknown():
    bare = {k: v for k, v in RECORD.items() if k != PRECISION_FIELD}
    assert precision_in_unit(bare, LATENCY, "us") is None
    native = {"size": 8, "time_us": {"mean": 1.0, "median": 1.0}}  # a native tool's record
    assert precision_in_unit(native, LATENCY, "us") is None
    one = dict(RECORD, **{PRECISION_FIELD: dict(RECORD[PRECISION_FIELD], block_spread=None)})
    assert precision_in_unit(one, LATENCY, "us")["block_spread"] is None


def test_a_data_path_value_carries_its_records_precision():
    """rfm.datapaths.case_record: a GPU alone, its own record; every GPU at once, the case's
    record with that GPU's goodput, its interval in proportion (the slowest GPU's is the case's)."""
    from gpucomm.rfm.datapaths import case_record

    prec = RECORD[PRECISION_FIELD]
    alone = [{**RECORD, "path": "h2d-ce", "numa": "near", "scope": "single", "gpu": g, "goodput_GBps": v}
             for g, v in ((0, 50.0), (1, 40.0))]
    together = {**RECORD, "path": "h2d-ce", "numa": "near", "scope": "all", "goodput_GBps": 30.0,
                "gpu_results": [{"gpu": 0, "goodput_GBps": 35.0}, {"gpu": 1, "goodput_GBps": 30.0}]}
    records = alone + [together]
    assert case_record(records, 1 << 20, "h2d-ce", "near", "single", 0) is alone[0]
    assert case_record(records, 1 << 20, "h2d-ce", "near", "single", None) is alone[1]   # the slowest
    gpu0 = case_record(records, 1 << 20, "h2d-ce", "near", "all", 0)
    assert gpu0["goodput_GBps"] == 35.0 and gpu0[PRECISION_FIELD] is prec
    p = precision_in_unit(gpu0, "goodput_GBps", "GB/s")
    assert p["ci95"] == pytest.approx([35.0 * 100 / 104, 35.0 * 100 / 98])
    assert case_record(records, 1 << 20, "h2d-ce", "near", "all", None)["goodput_GBps"] == 30.0
