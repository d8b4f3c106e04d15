"""The GPU data-path operation on several ranks without a GPU (tests/datapaths_standin.py: host
memory standing in for each rank's GPU): every GPU alone and all at once, each validated and
named by index and PCI bus id; a wrong byte names its GPU; the hooks and bad input, one line."""

import json
from pathlib import Path

from gpucomm.constants import DATAPATHS, TEST_SLOW_GPU
from gpucomm.contract import ERROR_PREFIX

STANDIN = Path(__file__).parents[1] / "datapaths_standin.py"


def _errors(run):
    return [ln for ln in run.stderr.splitlines() if ERROR_PREFIX in ln]


def test_every_gpu_alone_then_all_at_once(mpirun, tmp_path):
    out = tmp_path / "dp.json"
    run = mpirun.script(2, STANDIN, "--sizes", "4K,64K", "--json", out)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    doc = json.loads(out.read_text())
    recs = doc["results"]
    assert len(recs) == 2 * len(DATAPATHS) * 3 and all(r["validated"] for r in recs)
    buses = ["0000:19:00.0", "0000:1a:00.0"]
    assert [g["bus_id"] for g in doc["meta"]["gpus"]] == buses
    assert all(g["numa"]["near"]["binding"] for g in doc["meta"]["gpus"])
    singles = [r for r in recs if r["scope"] == "single"]
    assert sorted({(r["gpu"], r["bus_id"]) for r in singles}) == list(enumerate(buses))
    for r in (r for r in recs if r["scope"] == "all"):
        assert [g["bus_id"] for g in r["gpu_results"]] == buses and all(g["goodput_GBps"] > 0 for g in r["gpu_results"])
    bidir = [r for r in singles if r["path"] == "bidir-ce"]
    assert bidir and all(r["h2d_GBps"] > 0 and r["d2h_GBps"] > 0 for r in bidir)
    local = [r for r in recs if r["path"] == "local-ce"]
    assert all(r["numa"] == "device" and r["busbw_GBps"] == 0 for r in local)


def test_a_wrong_byte_names_its_gpu(mpirun):
    run = mpirun.script(2, STANDIN, "--sizes", "4K", "--paths", "d2h-ce",
                        env={"GPUCOMM_TEST_CORRUPT": "1:4096"})
    assert run.returncode == 4, run.stderr
    (line,) = _errors(run)
    assert "GPU 1 (0000:1a:00.0): d2h-ce near at 4096 B: the host destination is wrong" in line


def test_the_slowed_gpu_is_named(mpirun):
    run = mpirun.script(2, STANDIN, "--sizes", "64K", "--paths", "h2d-ce", env={TEST_SLOW_GPU: "1:0.5"})
    assert run.returncode == 0, run.stderr
    assert f"TEST HOOK ACTIVE: {TEST_SLOW_GPU}=1:0.5" in run.stdout  # a GPU that is not there: unit tests


def test_bad_input_is_one_line(mpirun):
    for args, said in ((["--sizes", "4K", "--numa-node", "99"], "--numa-node 99: no such NUMA node"),
                       (["--sizes", "8"], "sizes must be multiples of 16 B")):
        run = mpirun.script(1, STANDIN, *args)
        lines = _errors(run)
        assert run.returncode == 2 and len(lines) == 1 and said in lines[0], (args, run.stderr)
        assert "Traceback" not in run.stderr
