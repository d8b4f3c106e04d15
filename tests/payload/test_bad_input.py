"""Bad input to the payload is one line and a non-zero exit, found before the first size:
numbers that are not finite or absurd, sizes that cannot fit, an unwritable --json path, fault
hooks that cannot fire; and a hang names the rank that stopped answering."""

import json

import pytest

from gpucomm.constants import EXIT_BAD_INPUT, EXIT_TIMEOUT, EXIT_VALIDATION
from gpucomm.contract import ERROR_PREFIX


def one_error(run):
    lines = [ln for ln in run.stderr.splitlines() if ERROR_PREFIX in ln]
    assert "Traceback" not in run.stderr
    assert "internal error" not in run.stderr
    assert len(lines) == 1, run.stderr
    return lines[0]


@pytest.mark.parametrize("args,message", [
    (["--timeout", "inf"], "'inf' is not a finite number"),
    (["--timeout", "nan"], "'nan' is not a finite number"),
    (["--budget", "inf"], "'inf' is not a finite number"),
    (["--budget", "1e9"], "must be <="),
    (["--max-bandwidth", "nan"], "'nan' is not a finite number"),
    (["--iters", "99999999999"], "must be <="),
    (["--sizes", "1T"], "needs 5120.00 GiB per rank"),
])
def test_numbers_bounded(mpirun, args, message):
    run = mpirun(2, "pingpong", "--method", "host", *([] if "--sizes" in args else ["--sizes", "8"]), *args)
    assert run.returncode == EXIT_BAD_INPUT
    assert message in one_error(run)


def test_json_directory_fails_before_the_sweep(mpirun, tmp_path):
    """--json to a directory: bad input before the first size, not an internal error after the
    sweep; with a corrupted byte too, the validation failure is not masked either."""
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8,4K", "--json", str(tmp_path))
    assert run.returncode == EXIT_BAD_INPUT
    assert "is a directory" in one_error(run)
    assert "GPUCOMM-RESULT" not in run.stdout  # nothing was measured


def test_json_written_and_validation_failure_kept(mpirun, tmp_path):
    out = tmp_path / "r.json"
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8,4K", "--iters", "20", "--json", str(out),
                 extra_env={"GPUCOMM_TEST_CORRUPT": "1:4096"})
    assert run.returncode == EXIT_VALIDATION
    doc = json.loads(out.read_text())
    assert doc["summary"]["ok"] is False


@pytest.mark.parametrize("env,message", [
    ({"GPUCOMM_TEST_CORRUPT": "7:8"}, "there is no rank 7"),
    ({"GPUCOMM_TEST_CORRUPT": "1:4096"}, "size 4096 is not swept"),
    ({"GPUCOMM_TEST_HANG": "3:8"}, "there is no rank 3"),
    # a hook of another operation or method (old: exit 0, nothing injected, nothing said)
    ({"GPUCOMM_TEST_SLOW_PAIR": "0:1:0.01"}, "GPUCOMM_TEST_SLOW_PAIR=0:1:0.01 fires only in pair-matrix, not pingpong"),
    ({"GPUCOMM_TEST_IPC_REFUSED": "1"}, "GPUCOMM_TEST_IPC_REFUSED=1 fires only with --method ipc-copy, not host"),
    ({"GPUCOMM_TEST_IPC_REFUSED": "abc"}, "GPUCOMM_TEST_IPC_REFUSED=abc fires only with --method ipc-copy"),
    # the killed-rank modifier without the hang it modifies (old: exit 0)
    ({"GPUCOMM_TEST_HANG_EXIT": "1"}, "GPUCOMM_TEST_HANG_EXIT=1 needs GPUCOMM_TEST_HANG=RANK:SIZE"),
])
def test_hooks_that_cannot_fire_are_errors(mpirun, env, message):
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8", "--iters", "20", extra_env=env)
    assert run.returncode != 0
    assert message in run.stderr


def test_a_method_bound_hook_whose_method_was_skipped_fails(mpirun):
    """GPUCOMM_TEST_IPC_REFUSED in a sweep whose ipc-copy is skipped here (no GPU): the host
    method's pass would say nothing of the hook (old: exit 0, the hook unmentioned)."""
    run = mpirun(2, "pingpong", "--method", "host,ipc-copy", "--sizes", "8", "--iters", "20",
                 extra_env={"GPUCOMM_TEST_IPC_REFUSED": "1"})
    assert run.returncode == EXIT_BAD_INPUT, run.stdout + run.stderr
    line = one_error(run)
    assert "GPUCOMM_TEST_IPC_REFUSED=1 did not fire: it needs --method ipc-copy (ipc-copy: skipped:" in line


def test_slow_pair_naming_a_missing_rank(mpirun):
    run = mpirun(2, "pair-matrix", "--method", "host", "--sizes", "8", "--iters", "20",
                 extra_env={"GPUCOMM_TEST_SLOW_PAIR": "0:5:0.01"})
    assert run.returncode == EXIT_BAD_INPUT
    assert "do not both exist" in one_error(run)


def test_hang_names_the_rank_that_stopped(mpirun):
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8", "--iters", "20", "--warmup", "2",
                 "--timeout", "5", extra_env={"GPUCOMM_TEST_HANG": "1:8"}, timeout=120)
    assert run.returncode == EXIT_TIMEOUT or "Exit code:    124" in run.stderr + run.stdout
    assert "rank 1: pingpong/host timed out" in run.stderr
    assert "this rank stopped answering" in run.stderr
    assert "rank 0: pingpong/host timed out" not in run.stderr or "waiting in a barrier" in run.stderr


def test_a_default_sweep_stops_at_the_memory_share(mpirun, tmp_path):
    """--fit-memory (a check's own sweep, no -S sizes): the sizes that cannot fit the rank's
    memory share are left out with a note and the records' capped_at, and the run passes
    (old: "--sizes up to ... needs ... choose smaller sizes", a FAIL of a size nobody chose)."""
    out = tmp_path / "r.json"
    run = mpirun(2, "alltoall", "--method", "host", "--sizes", "8,1K,1T,2T", "--iters", "10",
                 "--fit-memory", "--json", out)
    assert run.returncode == 0, run.stderr
    notes = [ln for ln in run.stdout.splitlines() if "the default sweep stops at" in ln]
    assert len(notes) == 1, run.stdout
    assert notes[0].startswith("# host: the default sweep stops at 1KiB: 1024GiB needs 10240.00 GiB per rank, "
                               "the node's host memory (its share) has ")
    assert notes[0].endswith("; left out: 1024GiB, 2048GiB (sizes given explicitly must fit)")
    doc = json.loads(out.read_text())
    assert [r["size"] for r in doc["results"]] == [8, 1024]
    assert {r["capped_at"] for r in doc["results"]} == {1024}
    assert doc["meta"]["sizes_capped"] == notes[0][2:]


def test_a_default_sweep_that_fits_is_not_marked(mpirun):
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8,1K", "--iters", "10", "--fit-memory")
    assert run.returncode == 0, run.stderr
    assert "capped_at" not in run.stdout and "default sweep stops" not in run.stdout


def test_a_default_sweep_of_which_nothing_fits_is_an_error(mpirun):
    """Nothing measured is never a pass: the smallest size's need, as for explicit sizes."""
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "1T", "--fit-memory")
    assert run.returncode == EXIT_BAD_INPUT
    assert "needs 5120.00 GiB per rank" in one_error(run)


@pytest.mark.parametrize("env,message", [
    # old: accepted with the host method, which never reads them: a pass that said nothing
    ({"GPUCOMM_GPU_AWARE_MPI": "bogus"}, "bad GPUCOMM_GPU_AWARE_MPI='bogus': expected one of none, 0, p2p, full, 1"),
    ({"GPUCOMM_IPC_SYNC": "bogus"}, "bad GPUCOMM_IPC_SYNC='bogus': expected one of auto, stream, host"),
])
def test_a_methods_environment_is_checked_whatever_the_method(mpirun, env, message):
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8", "--iters", "10", extra_env=env)
    assert run.returncode == EXIT_BAD_INPUT
    assert one_error(run) == f"{ERROR_PREFIX} {message}" + ("" if "IPC" in message else " (none/0, p2p, full/1)")


def test_a_hooks_size_takes_units(mpirun):
    """Old: GPUCOMM_TEST_CORRUPT=1:4K said "expected RANK:SIZE"; a size is --sizes' syntax."""
    run = mpirun(2, "pingpong", "--method", "host", "--sizes", "8,4K", "--iters", "10",
                 extra_env={"GPUCOMM_TEST_CORRUPT": "1:4K"})
    assert run.returncode == EXIT_VALIDATION, run.stderr
    assert "size 4096 B" in one_error(run)


def test_an_unknown_data_path_is_bad_input_before_the_gpu_check(mpirun):
    """Old: `gpu-datapaths --paths nosuch` on a machine without a GPU exited 3 (capability)."""
    run = mpirun(1, "gpu-datapaths", "--method", "staging", "--paths", "nosuch", "--sizes", "1M")
    assert run.returncode == EXIT_BAD_INPUT
    assert "--paths 'nosuch': choose from h2d-ce" in one_error(run)
