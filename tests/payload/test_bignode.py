"""Issue 10 without the machines: the job layouts of 4- and 8-GPU nodes (the withheld
nvidia-h200-x4/-x8 kinds, NVSwitch: one pair class), dry-run on this CPU machine through a
config like the local one, and the pair matrix's schedule on 4 host ranks."""

import json
import subprocess

import pytest

from reframe_helpers import REPO, clean_env, job_script, reframe_cmd, report_cases

NODE_CONFIG = '''
site_configuration = {{
    "systems": [{{
        "name": "dgx", "descr": "{n} x H200, NVSwitch", "hostnames": [".*"], "modules_system": "nomod",
        "partitions": [{{"name": "h200x{n}", "scheduler": "local", "launcher": "mpirun",
                        "environs": ["default"], "features": ["gpu", "nvgpu", "gpucomm"],
                        "devices": [{{"type": "gpu", "num_devices": {n}}}],
                        "extras": {{"nodes": 1, "pair_classes": {{"default": "all"}}}}}}],
    }}],
    "environments": [{{"name": "default", "target_systems": ["dgx"],
                      "features": ["mpi", "cupy", "nccl", "gpu-aware-mpi"],
                      "extras": {{"gpu_aware_mpi_level": "full"}}}}],
}}
'''


def _dry_run(tmp_path, n, *args):
    config = tmp_path / f"dgx{n}.py"
    config.write_text(NODE_CONFIG.format(n=n))
    report = tmp_path / "report.json"
    cmd = reframe_cmd("-c", "checks/", *args, "--dry-run", "--prefix", tmp_path, "--report-file", report)
    cmd[cmd.index("-C") + 1] = str(config)
    run = subprocess.run(cmd, cwd=REPO, env=clean_env(), text=True, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:]
    return {c["display_name"].split(" /")[0]: c for c in report_cases(report)}


def _launch(case):
    return [ln for ln in job_script(case).splitlines() if ln.startswith("mpirun")][0]


@pytest.mark.parametrize("n", [4, 8])
def test_every_gpu_of_the_node(tmp_path, n):
    """Collectives, the pair matrix and the health sweeps take every GPU; the ping-pong a pair;
    the multi ping-pong treats two groups of n/2 GPUs as nodes."""
    cases = _dry_run(tmp_path, n, "-n", "AllReduceCheck|AllToAllCheck|PairMatrixCheck|HealthCheck|"
                     "PingPongCheck|MultiPingPongCheck", "-S", "emulate_nodes=y",
                     "-S", f"MultiPingPongCheck.ranks_per_node={n // 2}")
    for name in ("AllReduceCheck %method=ccl", "AllToAllCheck %method=gpu-aware-mpi",
                 "PairMatrixCheck %method=ccl", "HealthCheck %operation=allreduce"):
        assert _launch(cases[name]).startswith(f"mpirun -np {n} "), name
    assert _launch(cases["PingPongCheck %method=ipc-copy"]).startswith("mpirun -np 2 ")
    mpp = _launch(cases["MultiPingPongCheck %method=ccl %pairs=all"])
    assert mpp.startswith(f"mpirun -np {n} ") and f"--ranks-per-node {n // 2}" in mpp
    assert cases["PairMatrixCheck %method=host"]["result"] == "skip"  # a GPU node: GPU pairs only
    sweep = _launch(cases["HealthCheck %operation=alltoall"])
    assert "--method host,staging,gpu-aware-mpi,ipc-copy,ccl " in sweep  # full GPU-aware MPI here
    # one perf variable per ordered pair and mode: a slow pair is named
    perf = cases["PairMatrixCheck %method=ccl"]["perfvalues"]
    uni = [k for k in perf if ":uni_256MiB_" in k]
    assert len(uni) == n * (n - 1)


def test_pair_matrix_on_four_ranks(mpirun, tmp_path):
    """4 ranks: 12 ordered pairs one at a time, 6 bidirectional pairs, 3 concurrent rounds of 2
    disjoint pairs (per mode), every buffer validated."""
    run = mpirun(4, "pair-matrix", "--method", "host", "--sizes", "8", "--iters", "20",
                 "--json", tmp_path / "pm.json")
    assert run.returncode == 0, run.stderr
    recs = json.loads((tmp_path / "pm.json").read_text())["results"]
    assert all(r["validated"] for r in recs)
    by = {(r["mode"], r["scope"]): 0 for r in recs}
    for r in recs:
        by[r["mode"], r["scope"]] += 1
    assert by == {("uni", "single"): 12, ("bidir", "single"): 6, ("uni", "concurrent"): 3,
                  ("bidir", "concurrent"): 3}
    rounds = [r["pairs"] for r in recs if r["scope"] == "concurrent" and r["mode"] == "uni"]
    assert all(sorted(sum(p, [])) == [0, 1, 2, 3] for p in rounds)  # each round covers every rank
