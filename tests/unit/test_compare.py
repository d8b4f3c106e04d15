"""bench/compare's logic (bench/lib/compare.py) on captured outputs: OSU 7.4 host runs and the
payload's --json here, nccl-tests 2.19.6 from the 2x H200 node; the harness's dry run."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parents[1] / "data"
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "lib"))
import compare  # noqa: E402

#: the reference node's committed results: the tests marked committed hold its tables to them
H200X2 = REPO / "bench" / "results" / "2026-11-30-nvidia-h200-x2"


def fake_bin(folder, *names):
    folder.mkdir(exist_ok=True)
    for name in names:
        (folder / name).write_text("#!/bin/sh\nexit 1\n")
        (folder / name).chmod(0o755)
    return str(folder)


def replay(outputs, calls):
    """A runner that answers each command from ``outputs`` {marker in argv: (rc, text)}; a
    payload's text is also written as its --json file."""
    def runner(argv, stdout_path):
        calls.append(argv)
        line = " ".join(argv)
        rc, text = next(v for k, v in outputs.items() if k in line)
        if "--json" in argv and rc == 0:
            Path(argv[argv.index("--json") + 1]).write_text(text)
        return rc, text
    return runner


def test_host_pair_from_captured_outputs(tmp_path):
    setup = compare.Setup(mpirun="mpirun", mpirun_opts=["--mca", "pml", "ucx"], ngpus=0,
                          osu_dir=fake_bin(tmp_path / "osu", "osu_latency", "osu_bw"))
    pairs = compare.select(compare.make_pairs(sizes=[8, 64 << 20], iters=10, warmup=2), "host,ccl-pingpong")
    outputs = {"gpucomm pingpong": (0, (DATA / "compare" / "payload_pingpong_host.json").read_text()),
               "osu_latency": (0, (DATA / "compare" / "osu7_latency_8B_host.txt").read_text()),
               "osu_bw": (0, (DATA / "compare" / "osu7_bw_64M_host.txt").read_text())}
    calls = []
    rows, not_run = compare.run_pairs(pairs, setup, str(tmp_path / "out"), 2, replay(outputs, calls),
                                      sizes=[8, 64 << 20], iters=10, warmup=2, log=lambda *_: None)
    assert not_run == [("ccl-pingpong", "no GPU")]
    # alternating: payload, osu_latency, osu_bw, payload, ...; every launch with the same options
    assert [c[6].rsplit("/", 1)[-1] if "gpucomm" not in c else "payload" for c in calls] == \
        ["payload", "osu_latency", "osu_bw"] * 2
    assert all(c[:5] == ["mpirun", "-np", "2", "--mca", "pml"] for c in calls)
    lat, bw = rows
    assert lat["payload"] == pytest.approx(2.860249423974892) and lat["native"] == 0.26
    assert lat["criterion"] == "<= osu_latency + 0.1 us" and lat["result"] == "FAIL"  # Python on 2 vCPUs
    assert bw["native"] == pytest.approx(3.956) and bw["ratio"] == pytest.approx(5.905059796330801 / 3.956)
    assert bw["criterion"] == "" and bw["result"] == "" and bw["runs"] == "2/2"
    md = compare.markdown(rows, not_run)
    assert "| host | default | latency vs osu_latency latency | 8B | 2.86 | 0.26 | us |" in md
    assert "- ccl-pingpong: not run: no GPU" in md
    assert compare.csv_text(rows, not_run).splitlines()[-1] == "ccl-pingpong" + "," * 11 + "no GPU"


def _payload_json(points):
    return json.dumps({"results": [{"size": s, "time_us": {"median": t}, "goodput_GBps": s / t / 1e3}
                                   for s, t in points]})


def test_ccl_pingpong_against_nccl_tests(tmp_path):
    """Medians over the runs, the sendrecv busbw as the native bandwidth, thresholds per
    variant, and a payload variant the payload does not know yet reported as not run."""
    sizes = [8, 128 << 20, 512 << 20]
    setup = compare.Setup(mpirun="mpirun", mpirun_opts=[], ngpus=2,
                          nccl_tests_dir=fake_bin(tmp_path / "nccl", "sendrecv_perf"))
    pair = compare.select(compare.make_pairs(sizes=sizes), "ccl-pingpong")
    runs = iter([_payload_json([(8, 9.0), (128 << 20, 400.0), (512 << 20, 1480.0)]),
                 _payload_json([(8, 11.0), (128 << 20, 420.0), (512 << 20, 1500.0)])])
    outputs = {"--graph off": (2, "gpucomm: error: unrecognized arguments: --graph off"),
               "--graph on": None,
               "sendrecv_perf": (0, (REPO / "tests" / "data" / "native" / "nccl-tests_sendrecv_g2_2.txt").read_text())}
    calls = []

    def runner(argv, path):
        if "gpucomm" in argv and "on" in argv:
            outputs["--graph on"] = (0, next(runs))
        return replay(outputs, calls)(argv, path)

    rows, not_run = compare.run_pairs(pair, setup, str(tmp_path), 2, runner, sizes=sizes, log=lambda *_: None)
    assert not_run == [("ccl-pingpong/graph-off",
                        "failed: exit 2: gpucomm: error: unrecognized arguments: --graph off")]
    assert sum("--graph" in c and "off" in c for c in calls) == 1  # not retried after failing
    assert all("-g" in c and c[c.index("-g") + 1] == "1" for c in calls if c[3].endswith("sendrecv_perf"))
    by = {(r["variant"], r["size"]): r for r in rows}
    assert set(v for v, _ in by) == {"graph-on"}
    lat = by["graph-on", 8]
    assert lat["payload"] == 10.0 and lat["criterion"] == "<= sendrecv_perf and <= 7 us" and lat["result"] == "FAIL"
    big = by["graph-on", 512 << 20]
    assert big["payload"] == pytest.approx(((512 << 20) / 1480.0 + (512 << 20) / 1500.0) / 2e3)  # median of 2 runs
    assert big["criterion"] == "ratio >= 0.97"
    assert big["result"] == ("PASS" if big["ratio"] >= 0.97 else "FAIL")


@pytest.mark.parametrize("crit,kind,size,payload,native,want", [
    (("ratio_min", 0.97), "bw", 64 << 20, 97.0, 100.0, "PASS"),
    (("ratio_min", 0.97), "bw", 1 << 30, 96.9, 100.0, "FAIL"),
    (("abs_max", 7.0), "lat", 8, 6.9, None, "PASS"),
    (("abs_max", 7.0), "lat", 8, 7.1, 3.0, "FAIL"),
    (("over_native_max", 0.5), "lat", 8, 1.8, 1.31, "PASS"),
    (("over_native_max", 0.0), "lat", 8, 10.0, 9.9, "FAIL"),
    (("ratio_min", 0.97), "bw", 1 << 30, None, 100.0, "FAIL"),  # a payload that never ran
    (("native_and_abs_max", 7.0), "lat", 8, 6.5, 6.8, "PASS"),
    (("native_and_abs_max", 7.0), "lat", 8, 6.9, 6.8, "FAIL"),   # above nccl-tests
    (("native_and_abs_max", 7.0), "lat", 8, 7.2, 10.9, "FAIL"),  # above 7 us
    (None, "lat", 8, 10.0, 9.9, ""),
])
def test_judge(crit, kind, size, payload, native, want):
    assert compare.judge(crit, kind, size, payload, native) == want


def test_native_command_lines_come_from_the_checks_builders():
    """bench/compare's OSU and nccl-tests options are the native checks' builders' (one command
    line per tool and size range, gpucomm.native), not options of its own."""
    from gpucomm.native import nccl_tests_options, osu_options
    pairs = {p.name: p for p in compare.make_pairs(iters=50, warmup=5, window=8, lat_iters=10000,
                                                   lat_warmup=1000)}
    big = ["67108864:1073741824"]
    assert pairs["host"].native["osu_latency"]["args"] == osu_options(
        "osu_latency", 8, 8, iters=10000, warmup=1000, validate=True)
    assert pairs["gpu-aware-mpi-bw"].native["osu_bw"]["args"] == osu_options(
        "osu_bw", 64 << 20, 1 << 30, iters=50, warmup=5, window=8, device="cuda")
    assert pairs["gpu-aware-mpi-bw"].native["osu_bw"]["args"][:2] == ["-m"] + big
    nccl = pairs["ccl-allreduce"].native["all_reduce"]["args"]
    assert nccl == nccl_tests_options("all_reduce", min(compare.SIZES), max(compare.SIZES), nranks=2,
                                      iters=50, warmup=5)
    assert nccl[-8:] == ["-g", "1", "-c", "1", "-n", "50", "-w", "5"]


def test_bandwidth_is_judged_operation_against_the_same_operation():
    """bw (a window, then one acknowledgement) against back-to-back copies and osu_bw; the
    ping-pong against osu_latency's ping-pong; the ipc-copy ping-pong against the single copy
    is reported, not judged (a hand-over per transfer that the copy does not pay)."""
    pairs = {p.name: p for p in compare.make_pairs(window=8)}
    ipc_bw, ipc_pp = pairs["ipc-copy-bw"], pairs["ipc-copy"]
    assert ipc_bw.op == "bw" and ipc_bw.variants == {"default": ["--window", "8"]}
    assert {m.native_key for m in ipc_bw.metrics} == {"back_to_back_GBps"}
    assert {m.native_key for m in ipc_pp.metrics} == {"goodput_GBps"}
    assert compare.criterion("ipc-copy-bw", "default", "bw") == ("ratio_min", 0.97)
    assert compare.criterion("ipc-copy", "default", "bw") is None
    mpi_bw, mpi_pp = pairs["gpu-aware-mpi-bw"], pairs["gpu-aware-mpi"]
    assert mpi_bw.native["osu_bw"]["args"][:4] == ["-m", "67108864:1073741824", "-W", "8"]
    assert {m.native_tool for m in mpi_pp.metrics if m.kind == "bw"} == {"osu_latency_big"}
    big = mpi_pp.native["osu_latency_big"]
    assert big["binary"] == "osu_latency" and "-c" not in big["args"]
    assert big["args"][:2] == ["-m", "67108864:1073741824"]
    assert compare.criterion("gpu-aware-mpi", "default", "bw") == ("ratio_min", 0.97)
    assert compare.criterion("gpu-aware-mpi", "default", "lat") is None


def test_ce_copy_output_from_the_reference_node():
    rec = compare.parse_ce((DATA / "compare" / "ce_copy_64M_h200x2.txt").read_text())[64 << 20]
    assert rec["goodput_GBps"] == pytest.approx(382.0992985996899)
    assert rec["back_to_back_GBps"] == pytest.approx(387.9340231785426)
    with pytest.raises(compare.GpucommError, match="data check failed"):
        compare.parse_ce('CE-COPY {"write": {"size": 8, "median_GBps": 1, "back_to_back_GBps": 1, "validated": false}}')


def test_select_unknown_pair():
    with pytest.raises(compare.GpucommError):
        compare.select(compare.make_pairs(), "host,nccl")


def test_harness_dry_run_on_a_cpu_machine(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUCOMM_")}
    env["GPUCOMM_OSU_DIR"] = fake_bin(tmp_path / "osu", "osu_latency", "osu_bw")
    run = subprocess.run([sys.executable, str(REPO / "bench" / "compare"), "--dry-run", "--out", str(tmp_path)],
                         env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    for name in ("ipc-copy-bw", "ipc-copy", "ccl-pingpong", "ccl-allreduce", "gpu-aware-mpi-bw", "gpu-aware-mpi"):
        assert f"# {name}: not run: no GPU" in lines
    assert "# host: 3 x (payload variants, then native), alternating" in lines
    # the latency size in a payload run of its own, with OSU's 10000 iterations, as osu_latency
    payload_lat, payload, lat, bw = lines[-4:]
    assert "-m gpucomm pingpong --method host --sizes 8 --iters 10000 --warmup 1000 --json" in payload_lat
    assert payload_lat.endswith("R-payload-default-lat.json")
    assert "-m gpucomm pingpong --method host --sizes 67108864,268435456,1073741824 --iters 50 --warmup 5" in payload
    assert lat.endswith(f"{tmp_path}/osu/osu_latency -m 8:8 -i 10000 -x 1000 -c")
    assert bw.endswith("osu_bw -m 67108864:1073741824 -W 1 -i 50 -x 5")
    assert not (tmp_path / "raw").exists()  # nothing ran
    env["GPUCOMM_OSU_DIR"] = str(tmp_path / "none")
    env["PATH"] = os.path.dirname(sys.executable) + ":/usr/bin:/bin"
    run = subprocess.run([sys.executable, str(REPO / "bench" / "compare"), "--dry-run", "--only", "host"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.stdout.startswith("# host: not run: osu_latency not found (set GPUCOMM_OSU_DIR")


@pytest.mark.committed
def test_side_by_side_from_the_reference_node_reports(tmp_path):
    """bench/lib/side_by_side.py: the native checks' report against the health sessions' reports,
    same method, operation and size (the committed 11-tools2/side-by-side.md)."""
    results = H200X2
    health = sorted(str(p) for d in ("12-health", "13-health-validation")
                    for p in (results / d / "reports").glob("report-health-*.json"))
    out = tmp_path / "sbs.md"
    run = subprocess.run([sys.executable, str(REPO / "bench" / "lib" / "side_by_side.py"),
                          "--native", str(results / "11-tools2" / "report-native.json"),
                          "--payload", *health, "--md", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    text = out.read_text()
    assert text == (results / "11-tools2" / "side-by-side.md").read_text()
    assert "| pingpong | host | latency_8B | 0.89 us (20) | osu_latency -c, host buffers | 0.44 us | 2.021 |" in text


@pytest.mark.committed
@pytest.mark.parametrize("only,sizes,iters,warmup,table", [
    ("ipc-copy-bw,ipc-copy,ccl-pingpong,ccl-allreduce,gpu-aware-mpi-bw,gpu-aware-mpi", "8,64M,256M,1G", 50, 5,
     "compare"),
    ("host", "8,64M", 200, 20, "compare-host"),
])
def test_the_reference_node_tables_from_their_raw_outputs(tmp_path, only, sizes, iters, warmup, table):
    """15-issue8-bw's committed ratio tables are what bench/compare --from-raw makes of the
    raw outputs committed beside them (every pair, OSU, nccl-tests, CE copy and payload JSON)."""
    import tarfile
    results = H200X2 / "15-issue8-bw"
    with tarfile.open(results / "data.tgz") as tar:
        # the "data" filter where this Python has it (3.11.4+), our own archive either way
        tar.extractall(tmp_path, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    run = subprocess.run([sys.executable, str(REPO / "bench" / "compare"), "--from-raw", "--out",
                          str(tmp_path / table), "--only", only, "--sizes", sizes, "--iters", str(iters),
                          "--warmup", str(warmup), "--repeats", "3", "--lat-iters", "0"],  # one run per pair then
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == (1 if table == "compare-host" else 0), run.stdout + run.stderr
    made = (tmp_path / table / "compare.md").read_text()
    want = (results / f"{table}.md").read_text()
    if table == "compare-host":  # judged then against +0.5 us; issue 21 asks for 0.1 us: 0.26 over fails
        want = want.replace("<= osu_latency + 0.5 us | PASS", "<= osu_latency + 0.1 us | FAIL")
        assert made == want and made.count("FAIL") == 1 and "PASS" not in made
        return
    assert made == want
    assert "FAIL" not in made and made.count("PASS") == 19
