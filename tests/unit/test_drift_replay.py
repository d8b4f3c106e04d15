"""The reference node's committed health runs replayed as nights through the nightly drift verdict
(bench/studies/drift_replay.py): a test about the committed results, outside the unit tier."""

import importlib.util
from pathlib import Path

import pytest

from gpucomm.analysis import drift
from gpucomm.analysis.report import drift_page
from test_drift import LOWERED

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.committed


@pytest.fixture(scope="module")
def replay():
    spec = importlib.util.spec_from_file_location("drift_replay", REPO / "bench" / "studies" / "drift_replay.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    perf, cases, notes = mod.load(mod.study_paths() + mod.later_paths())
    return mod, perf, cases


def test_replay_reference_node(replay):
    """The 34 committed health sessions of local:h200x2, the sessions of one device call a night
    (--night-gap 0.03): nothing flagged on the 26 of the tolerance study (3 nights: references
    only); on the later ones one variable, gpu-aware-mpi's 8 B ping-pong latency, 40-75 % slower in
    the two device calls of 19-nvshmem-bw (another tree of gpucomm), on the second of them."""
    mod, perf, cases = replay
    study = perf["source"].str.contains("/1[023]-health")
    d = drift.judge_nights(perf[study], cases, night_gap_h=0.03)
    assert d.table["night"].max() == 2 and set(d.table["status"]) == {"new"}
    d = drift.judge_nights(perf, cases, night_gap_h=0.03)
    flagged = d.table[d.table["status"].isin(("FAIL", "suspect"))]
    assert d.table["night"].max() == 8
    assert [(r.night, r.test, r.var, r.status) for r in flagged.itertuples()] == [
        (8, "HealthCheck %operation=pingpong", "gpu-aware-mpi_latency_8B", "FAIL")]


def test_replay_one_variable_lowered(replay):
    """The same with the pair matrix's ccl 256 MiB bandwidth 5 % lower on the last night (two
    sessions): flagged that night, by name, confirmed by its second measurement."""
    mod, perf, cases = replay
    nights, _ = drift.measurements(perf, cases, night_gap_h=0.03)
    last = sorted(set(nights.loc[nights["night"] == nights["night"].max(), "session"]))
    assert len(last) == 2
    d = drift.judge_nights(mod.lowered(perf, ":".join(LOWERED), 0.05, last), cases, night_gap_h=0.03)
    row = d.failed[(d.failed["test"] == LOWERED[0]) & (d.failed["var"] == LOWERED[1])]
    assert len(row) == 1 and row["rule"].item() == "step"
    assert row["change"].item() == pytest.approx(-0.052, abs=0.01)
    assert LOWERED[1] in drift_page.reason(row.iloc[0]) and "history centre" in drift_page.reason(row.iloc[0])
