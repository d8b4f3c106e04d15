"""gpucomm tolerances (gpucomm.analysis.tolerances) on the reference node's committed health-mode reports: the shipped
references (config/references/local.yaml) are what the rule gives on the 26 sessions, and the
cross-validation committed beside them comes out of --judge."""

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
#: bench/results/2026-11-30-nvidia-h200-x2/{10-health,12-health,13-health-validation}/reports
RESULTS = REPO / "bench" / "results" / "2026-11-30-nvidia-h200-x2"
FRESH = "(pingpong ipc-copy_|%method=ipc-copy )"
#: the shipped references against the committed sessions they came from: outside the unit tier
pytestmark = pytest.mark.committed


def _tolerances():
    from gpucomm.analysis import tolerances
    return tolerances


def reports(folder):
    return sorted(str(p) for p in (RESULTS / folder / "reports").glob("report-health-*.json"))


@pytest.fixture(scope="module")
def tol():
    return _tolerances()


def test_the_shipped_health_references_are_the_rule_on_26_sessions(tol, tmp_path):
    out = tmp_path / "t.yaml"
    args = reports("12-health") + reports("13-health-validation") + ["--pool", *reports("10-health"),
                                                                      "--fresh-only", FRESH, "--pairs-pooled",
                                                                      "--keep-reference-failures",
                                                                      "--yaml", str(out),
                                                                      "--md", str(tmp_path / "t.md")]
    assert tol.main(args) == 0
    proposed = yaml.safe_load(out.read_text())
    shipped = yaml.safe_load((REPO / "config" / "references" / "local.yaml").read_text())
    for op in ("pingpong", "allreduce", "alltoall"):
        mine = proposed[f"HealthCheck %operation={op}"]["local:h200x2"]
        ship = shipped["HealthCheck"]["local:h200x2"][op]
        assert {k: ship.get(k) for k in mine} == mine
        # what those sessions did not sweep comes from later runs, each named in local.yaml:
        # nvshmem, and gpu-aware-mpi's collectives under bench/build's MPI (21-every-method)
        later = ("nvshmem_",) if op == "pingpong" else ("nvshmem_", "gpu-aware-mpi_")
        assert all(k.startswith(later) for k in set(ship) - set(mine)), ship
    for method in ("ipc-copy", "ccl", "gpu-aware-mpi"):
        mine = proposed[f"PairMatrixCheck %method={method}"]["local:h200x2"]
        ship = shipped["PairMatrixCheck"]["local:h200x2"][method]["all"]
        assert {k: v for k, v in ship.items() if k != "uni_1GiB"} == {k: mine[k] for k in ship if k != "uni_1GiB"}
    assert "FAIL" not in (tmp_path / "t.md").read_text()  # every session passes what it shaped


def test_cross_validation(tol, tmp_path):
    md = tmp_path / "x.md"
    tol.main(reports("12-health") + ["--pool", *reports("10-health"), "--fresh-only", FRESH, "--pairs-pooled",
                                     "--keep-reference-failures", "--judge", *reports("13-health-validation"),
                                     "--md", str(md)])
    assert "10 of 10 later runs pass" in md.read_text()
    tol.main(reports("13-health-validation") + ["--pool", *reports("10-health"), "--fresh-only", FRESH,
                                                "--pairs-pooled", "--keep-reference-failures", "--judge",
                                                *reports("12-health"), "--md", str(md)])
    text = md.read_text()
    assert "9 of 10 later runs pass" in text
    fails = [ln for ln in text.splitlines() if "| FAIL |" in ln]
    assert len(fails) == 1 and "HealthCheck %operation=allreduce ipc-copy_goodput_1MiB = 10.602" in fails[0]


def test_pairs_pooled_and_fresh_only(tol):
    pooled, _ = tol.collect(reports("12-health"), pairs_pooled=True)
    key = ("PairMatrixCheck %method=ccl", "local:h200x2", "uni_256MiB")
    assert len(pooled[key]) == 20  # 10 sessions x 2 ordered pairs
    assert ("PairMatrixCheck %method=ccl", "local:h200x2", "uni_256MiB_0-1") not in pooled
