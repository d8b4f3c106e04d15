"""``python -m gpucomm.analysis.references``: the paper's CSV -> ReFrame external references.

The tool's rules are tested on a few synthetic rows (always); the committed YAML files are
checked against the paper data shipped in gpucomm/data.
"""

import csv
import math

import pytest
import yaml

from gpucomm.analysis.references import (
    FIGURES,
    METHOD_OF,
    NO_FIGURE,
    PARTITION_OF,
    build,
    generate,
    index_of,
    keys_of,
    main,
    perf_points,
)
from gpucomm.constants import BEYOND_PAPER, METHODS, PAPER_REFERENCES
from gpucomm.metrics import busbw_is_goodput
from reframe_helpers import REPO, SHARED_CSV, check_classes

REFS = REPO / "config" / "references"
GiB = 1 << 30
HEADER = ("system,scope,operation,method,gpu_pair,nodes,ranks,size_bytes,goodput_gbps_mean,"
          "goodput_gbps_median,goodput_gbps_p05,goodput_gbps_p95,time_us_mean,time_us_median,"
          "iterations,source_figure\n")
ROWS = """\
alps,intra,pingpong,ccl,,1,2,8,0.00875903,0.00877193,0.00817912,0.00943508,7.4192,7.296,400,fig3
alps,intra,pingpong,ccl,,1,2,1073741824,1003.28,1003.43,1001.75,1004.25,8561.89,8560.54,100,fig3
alps,intra,pingpong,ccl,,1,2,4,0.0042,0.0043,0.0038,0.0047,7.7,7.5,700,fig3-unplotted
alps,intra,pingpong,ccl,,1,2,64,0.068,0.0688,0.0631,0.0740,7.68,7.44,600,fig3
alps,intra,pingpong,gpu_aware_mpi,,1,2,8,0.0053,0.0050,0.0025,0.0056,12.5,12.2,100,fig3
alps,inter,pingpong,host_mpi,,2,8,1073741824,700,700,690,710,1,1,100,fig7
alps,inter,pingpong,ccl,,2,8,8,0.0153,0.0153,0.0147,0.0157,16.84,16.776,100,fig7
lumi,inter,pingpong,ccl,,2,16,8,0.0153,0.0153,0.0147,0.0157,36.5,36.5,100,fig7
lumi,inter,alltoall,ccl,,4,32,2097152,88,88.6,87,90,1,1,100,fig9
lumi,intra,pingpong,device_copy,0-2,1,2,1073741824,300.4,300.4,300.3,300.5,1,1,100,fig4
lumi,intra,allreduce,ccl,,1,8,1073741824,541.786,541.473,539.139,544.873,15855.1,15864,100,fig6
lumi,intra,alltoall,device_copy,,1,8,1073741824,175.387,175.0,100.0,177.313,342631,342838,100,fig5
lumi,inter,allreduce,ccl,,16,128,1073741824,400,400,380,410,1,1,1,fig10
"""


@pytest.fixture
def paper_csv(tmp_path):
    path = tmp_path / "paper.csv"
    path.write_text(HEADER + ROWS)
    return path


def test_rules_on_synthetic_rows(paper_csv):
    refs = {name: yaml.safe_load(text) for name, text in generate(str(paper_csv), False).items()}
    assert set(refs) == {"alps.yaml", "lumi.yaml"}
    alps = refs["alps.yaml"]
    assert list(alps) == [PAPER_REFERENCES, "PingPongCheck"]  # Fig. 7's rows need num_nodes
    assert alps[PAPER_REFERENCES] == ["PingPongCheck"]  # judged in the paper mode only
    pp = alps["PingPongCheck"]
    assert pp["$index"] == ["$partition", "method"]
    ccl = pp["alps:gh200"]["ccl"]
    # only our perf variables' sizes (8 B, 1 GiB); 4 B and 64 B have no perf variable
    assert list(ccl) == ["latency_8B", "goodput_1GiB"]
    # latency = median time; its rise = median/p05 goodput - 1 = 7.2 %, below the 10 % floor
    assert ccl["latency_8B"] == [7.296, None, 0.1, "us"]
    # goodput in GB/s = median Gb/s / 8; its fall 0.17 % < the 5 % floor
    assert ccl["goodput_1GiB"] == [1003.43 / 8, -0.05, None, "GB/s"]
    # a wide spread is kept: p05 half the median -> the time may double (+100 %)
    assert pp["alps:gh200"]["gpu-aware-mpi"]["latency_8B"] == [12.2, None, 1.0, "us"]

    lumi = refs["lumi.yaml"]
    assert "PingPongCheck" not in lumi  # Fig. 4's GCD pairs are not the check's pair
    ar = lumi["AllReduceCheck"]["lumi:standard-g"]["ccl"]
    assert ar["goodput_1GiB"] == [541.473 / 8, -0.05, None, "GB/s"]
    assert ar["busbw_1GiB"][0] == pytest.approx(541.473 / 8 * 2 * 7 / 8, rel=1e-12)  # 2(n-1)/n
    assert "latency_8B" not in ar  # the paper row at 8 B is not in the synthetic CSV
    a2a = lumi["AllToAllCheck"]["lumi:standard-g"]["ipc-copy"]
    assert a2a["goodput_1GiB"][0] == 175.0 / 8 and "busbw_1GiB" not in a2a  # all-to-all: factor 1, a copy
    assert a2a["goodput_1GiB"][1] == pytest.approx(-0.429)  # (175 - 100) / 175, rounded up


def test_multi_node_index(paper_csv):
    with open(paper_csv, newline="") as fp:
        refs = build(list(csv.DictReader(fp)), with_nodes=True)
    ar = refs["lumi"]["AllReduceCheck"]
    assert ar["$index"] == ["$partition", "num_nodes", "method"]
    assert sorted(ar["lumi:standard-g"]) == [1, 16]  # Fig. 6 on one node, Fig. 10 on 16
    assert ar["lumi:standard-g"][16]["ccl"]["goodput_1GiB"][0] == 400 / 8
    assert 1 in refs["alps"]["PingPongCheck"]["alps:gh200"]
    # Fig. 7: 2 nodes, same switch, P = ranks per node pairs; goodput the per-node aggregate
    mpp = refs["alps"]["MultiPingPongCheck"]
    assert mpp["$index"] == ["$partition", "num_nodes", "placement", "num_tasks_per_node", "method"]
    alps = mpp["alps:gh200"][2]["same-switch"][4]
    assert list(alps) == ["host", "ccl"]  # gpucomm.METHODS order
    assert alps["host"] == {"goodput_1GiB": [700 / 8, -0.05, None, "GB/s"]}
    assert alps["ccl"] == {"latency_8B": [16.776, None, 0.1, "us"]}
    assert list(refs["lumi"]["MultiPingPongCheck"]["lumi:standard-g"][2]["same-switch"]) == [8]
    # Fig. 9 at 2 MiB blocks: the scaling check's own perf variables, not AllToAllCheck's
    a2a = refs["lumi"]["AllToAllScalingCheck"]["lumi:standard-g"]
    assert a2a[4]["ccl"] == {"goodput_2MiB": [88.6 / 8, -0.05, None, "GB/s"]}  # busbw: a copy
    assert 4 not in refs["lumi"]["AllToAllCheck"]["lumi:standard-g"]  # no perf variable at 2 MiB
    assert refs["lumi"]["AllReduceScalingCheck"]["lumi:standard-g"][16]["ccl"]["goodput_1GiB"][0] == 50


def test_cli(paper_csv, tmp_path, capsys):
    out = tmp_path / "refs"
    assert main(["--csv", str(paper_csv), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["alps.yaml", "lumi.yaml"]
    assert main(["--csv", str(paper_csv), "--out", str(out), "--check"]) == 0
    (out / "alps.yaml").write_text("# edited by hand\n")
    assert main(["--csv", str(paper_csv), "--out", str(out), "--check"]) == 1
    assert "alps.yaml" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["--csv", str(tmp_path / "missing.csv"), "--out", str(out)])
    assert exc.value.code == 2


def test_every_check_has_a_figure_mapping():
    """A new check must say which of the paper's figures it reproduces (or none) here."""
    assert set(check_classes()) <= set(FIGURES) | set(NO_FIGURE)
    assert set(METHOD_OF.values()) == set(METHODS) - set(BEYOND_PAPER)


def test_committed_files_are_valid_references():
    """Without the CSV: each file loads, is indexed the way the checks can be looked up, and
    names only partitions of its own system."""
    for system, partition in PARTITION_OF.items():
        refs = yaml.safe_load((REFS / f"{system}.yaml").read_text())
        assert refs.pop(PAPER_REFERENCES) == list(refs)  # every entry the paper's
        assert set(refs) <= set(FIGURES)
        for check, entry in refs.items():
            index = index_of(check, True)
            assert entry["$index"] == index, f"{system}.yaml {check}: regenerate the references"
            assert set(entry) == {"$index", partition}


needs_csv = pytest.mark.skipif(not SHARED_CSV.exists(), reason=f"{SHARED_CSV} not found")


@needs_csv
def test_committed_files_are_up_to_date():
    files = generate(str(SHARED_CSV))
    for name, text in files.items():
        assert (REFS / name).read_text() == text, f"{name}: run python -m gpucomm.analysis.references"
    assert sorted(files) == sorted(f"{s}.yaml" for s in PARTITION_OF)


@needs_csv
def test_every_paper_measurement_has_its_reference():
    """Every (system, check, method, size) the paper measured that a check has a perf variable
    for carries a reference whose value is the CSV's."""
    with_nodes = True
    refs = {s: yaml.safe_load((REFS / f"{s}.yaml").read_text()) for s in PARTITION_OF}
    checked, per_check = 0, dict.fromkeys(FIGURES, 0)
    with open(SHARED_CSV, newline="") as fp:
        rows = list(csv.DictReader(fp))
    for check, (op, fig1, fign) in FIGURES.items():
        figs = ({fig1, fign} if with_nodes else {fig1}) - {None}
        for row in rows:
            if row["operation"] != op or row["source_figure"].split("-")[0] not in figs:
                continue
            size = int(row["size_bytes"])
            points = {v: p for v, p in perf_points(check).items() if p[0] == size}
            if not points:
                continue
            entry = refs[row["system"]][check]
            for key in keys_of(check, row, with_nodes):
                entry = entry[key]
            entry = entry[METHOD_OF[row["method"]]]
            for var, (_, field, unit) in points.items():
                if field == "busbw_GBps" and busbw_is_goodput(op, size, int(row["ranks"])):
                    assert var not in entry  # the check reports no copy of its goodput
                    continue
                value, lower, upper, ref_unit = entry[var]
                assert ref_unit == unit
                if field == "latency":
                    assert value == float(row["time_us_median"]) and lower is None and upper > 0
                else:
                    goodput = float(row["goodput_gbps_median"]) / 8
                    if field == "goodput_GBps":
                        assert value == goodput
                    else:
                        assert value >= goodput and math.isfinite(value)
                    assert upper is None and -1 <= lower < 0
                checked += 1
                per_check[check] += 1
    # one node: 11 (system, method) pairs x (2 ping-pong + 3 all-to-all + 3 all-reduce variables)
    assert checked >= 88
    if with_nodes:  # Fig. 7: 9 (system, method) pairs x 2; Figs. 9/10: every node count x 2
        assert per_check["MultiPingPongCheck"] == 18
        # all-to-all: goodput only (its busbw is a copy, left out)
        assert per_check["AllToAllScalingCheck"] >= 30 and per_check["AllReduceScalingCheck"] >= 2 * 40
