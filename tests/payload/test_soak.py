"""The soak (--validate-every, payload.soak): an intermittent corruption
(GPUCOMM_TEST_CORRUPT_EVERY) that the one check per size misses is caught and counted, naming
rank, size and iteration; every operation either soaks or refuses in one line; the GPU methods'
stand-ins soak as the host method does."""

import json
from pathlib import Path

import pytest

from gpucomm.constants import EXIT_BAD_INPUT, EXIT_VALIDATION
from gpucomm.contract import CHECKED, ERROR_PREFIX, VALIDATE_EVERY, WRONG, parse_output
from gpucomm.payload.soak import holds_multiple

TESTS = Path(__file__).parents[1]
#: 20 iterations, one per sample: rank 1's data at 8 B is damaged after iterations 7 and 14,
#: and the last one (20) is clean, so the check after the last sample misses it
ONE_IN_7 = {"GPUCOMM_TEST_CORRUPT": "1:8", "GPUCOMM_TEST_CORRUPT_EVERY": "7"}
HOST = ["--method", "host", "--sizes", "8,1M", "--iters", "20", "--batch", "1", "--quiet"]


def error_lines(run):
    return [ln for ln in run.stderr.splitlines() if ERROR_PREFIX in ln]


def test_holds_multiple():
    assert [s for s in range(10) if holds_multiple(s, 1, 7)] == [6]
    assert [s for s in range(10) if holds_multiple(s, 4, 10)] == [2, 4, 7, 9]  # 12, 20, 32, 40
    assert all(holds_multiple(s, 20, 5) for s in range(5))  # N below the batch: every sample


def test_intermittent_corruption_missed_without_the_soak(mpirun):
    run = mpirun(2, "pingpong", *HOST, extra_env=ONE_IN_7)
    assert run.returncode == 0, run.stderr
    assert "TEST HOOK ACTIVE: GPUCOMM_TEST_CORRUPT=1:8 GPUCOMM_TEST_CORRUPT_EVERY=7" in run.stdout
    records, summary = parse_output(run.stdout)
    assert summary["ok"] and all(WRONG not in r for r in records)


def test_intermittent_corruption_caught_with_the_soak(mpirun, tmp_path):
    out = tmp_path / "soak.json"
    run = mpirun(2, "pingpong", *HOST, "--validate-every", "7", "--json", out, extra_env=ONE_IN_7)
    assert run.returncode == EXIT_VALIDATION, run.stderr
    lines = error_lines(run)
    assert len(lines) == 1, run.stderr
    assert "rank 1: data received from rank 0 is wrong at size 8 B" in lines[0]
    assert ("in timed iteration 7 of 20: 2 of 2 checked samples wrong (--validate-every 7: the last iteration of "
            "each sample of 1 that holds a multiple of 7)") in lines[0]
    doc = json.loads(out.read_text())
    rec, = doc["results"]  # the failing size's record is written, then the run stops
    assert (rec[VALIDATE_EVERY], rec[CHECKED], rec[WRONG], rec["validated"]) == (7, 2, 2, False)
    assert doc["meta"][VALIDATE_EVERY] == 7 and not doc["summary"]["ok"]


@pytest.mark.parametrize("op,n,extra", [
    ("pingpong", 2, []), ("bw", 2, ["--window", "4"]), ("allreduce", 3, []), ("alltoall", 3, []),
    ("multi-pingpong", 4, ["--ranks-per-node", "2"]), ("pair-matrix", 3, []),
])
def test_every_operation_soaks_clean_data(mpirun, op, n, extra):
    run = mpirun(n, op, "--method", "host", "--sizes", "8,64K", "--iters", "12", "--batch", "2",
                 "--validate-every", "2", "--validate-sizes", "64K", "--quiet", *extra)
    assert run.returncode == 0, run.stderr
    records, summary = parse_output(run.stdout)
    assert summary["ok"]
    for rec in records:
        if rec["size"] == 64 << 10:
            assert (rec[CHECKED], rec[WRONG]) == (rec["samples"], 0), rec
        else:  # not one of --validate-sizes: the plain record
            assert WRONG not in rec and CHECKED not in rec, rec


@pytest.mark.parametrize("args,env,says", [
    (["aggressor", "--method", "host", "--sizes", "8", "--duration", "0.2", "--validate-every", "3"], {},
     "--validate-every does not apply to aggressor: its one timed sample is the whole run"),
    (["pingpong", "--method", "host", "--sizes", "8", "--validate-every", "3", "--validate-sizes", "16"], {},
     "--validate-sizes: 16 B not swept"),
    (["pingpong", "--method", "host", "--sizes", "8", "--validate-sizes", "8"], {},
     "--validate-sizes needs --validate-every"),
    (["pingpong", "--method", "host", "--sizes", "8", "--validate-every", "0"], {}, "must be >= 1"),
    (["pingpong", "--method", "host", "--sizes", "8"], {"GPUCOMM_TEST_CORRUPT_EVERY": "3"},
     "GPUCOMM_TEST_CORRUPT_EVERY=3 needs GPUCOMM_TEST_CORRUPT=RANK:SIZE"),
    (["pingpong", "--method", "host", "--sizes", "8"], dict(ONE_IN_7, GPUCOMM_TEST_CORRUPT_EVERY="x"),
     "bad GPUCOMM_TEST_CORRUPT_EVERY='x'"),
    # asked for and not done (old: exit 0, 0 checked; PASSED, the hook never fired)
    (["pingpong", "--method", "host", "--sizes", "8", "--iters", "10", "--validate-every", "1000"], {},
     "--validate-every 1000: size 8 B had 10 timed iterations, no multiple of 1000: nothing was checked"),
    (["pingpong", "--method", "host", "--sizes", "8", "--iters", "10"], dict(ONE_IN_7, GPUCOMM_TEST_CORRUPT_EVERY="50"),
     "GPUCOMM_TEST_CORRUPT_EVERY=50 did not fire: size 8 B had 10 timed iterations, no multiple of 50"),
])
def test_refused_in_one_line(mpirun, args, env, says):
    run = mpirun(2, *args, extra_env=env)
    assert run.returncode == EXIT_BAD_INPUT, run.stdout + run.stderr
    lines = error_lines(run)
    assert len(lines) == 1 and says in lines[0], run.stderr
    assert "GPUCOMM-RESULT: PASS" not in run.stdout


#: the GPU methods' stand-ins: (script, its arguments, env, iterations, batch) as the script runs them
STANDINS = {
    "gpu-aware-mpi": ("device_standin.py", ["pingpong", "8,4K"], {"GPUCOMM_GPU_AWARE_MPI": "p2p"}, 40, 4),
    "ipc-copy": ("ipc_standin.py", ["pingpong", "8,4K"], {}, 30, 3),
    "nvshmem": ("nvshmem_standin.py", ["pingpong", "8,4K"], {}, 30, 3),
}


@pytest.mark.parametrize("method", sorted(STANDINS))
def test_gpu_method_standins_soak(mpirun, method):
    script, args, env, iters, batch = STANDINS[method]
    k = 3 * batch  # damaged after iterations 3B, 6B, 9B: the last one (iters) is clean
    hook = dict(env, GPUCOMM_TEST_CORRUPT="0:4096", GPUCOMM_TEST_CORRUPT_EVERY=str(k))
    missed = mpirun.script(2, TESTS / script, *args, env=hook)
    assert missed.returncode == 0, missed.stderr
    caught = mpirun.script(2, TESTS / script, *args, env=dict(hook, STANDIN_ARGS=f"--validate-every {k}"))
    assert caught.returncode == EXIT_VALIDATION, caught.stdout + caught.stderr
    line, = error_lines(caught)
    assert "rank 0: data received from rank 1 is wrong at size 4096 B" in line
    assert f"in timed iteration {k} of {iters}: 3 of 3 checked samples wrong" in line
    clean = mpirun.script(2, TESTS / script, *args, env=dict(env, STANDIN_ARGS="--validate-every 1"))
    assert clean.returncode == 0, clean.stderr
    records, _ = parse_output(clean.stdout)
    assert [(r[CHECKED], r[WRONG]) for r in records] == [(iters // batch, 0)] * 2
