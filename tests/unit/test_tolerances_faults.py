"""gpucomm tolerances under unhealthy input: a failed run is left out of the pool (and counted),
too few healthy runs propose nothing without --force, a bandwidth bound is never 0 or below, and
an output path that cannot be written is one line, exit 2."""

import copy
import json
from pathlib import Path

import pytest
import yaml

from gpucomm.constants import EXIT_BAD_INPUT

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "tests" / "data" / "h200x2-runs" / "health" / "10-health"
CHECK, VAR = "HealthCheck %operation=pingpong", "host_goodput_1MiB"


def _healthy_report():
    for path in sorted(RESULTS.glob("report-health-*.json")):
        doc = json.loads(path.read_text())
        if doc["session_info"].get("num_failures") == 0:
            return doc
    raise AssertionError("no healthy report among the committed ones")


def _write(tmp_path, n, failed=()):
    """n copies of one healthy session (distinct uuids, goodput scaled a little); those in
    ``failed``: ReFrame failed the ping-pong case, its 1 MiB goodput a tenth."""
    base, paths = _healthy_report(), []
    for i in range(n):
        doc = copy.deepcopy(base)
        doc["session_info"]["uuid"] = f"session-{i}"
        for tc in doc["runs"][0]["testcases"]:
            for val in (tc.get("perfvalues") or {}).values():
                if isinstance(val, list) and val and isinstance(val[0], (int, float)):
                    val[0] *= 1 + 0.01 * i
            if tc["name"] == CHECK and i in failed:
                tc["result"], tc["fail_phase"], tc["fail_reason"] = "fail", "sanity", "a rank was killed"
                for key, val in tc["perfvalues"].items():
                    if key.endswith(VAR):
                        val[0] /= 10
        path = tmp_path / f"run-{i}.json"
        path.write_text(json.dumps(doc))
        paths.append(str(path))
    return paths


@pytest.fixture(scope="module")
def tol():
    from gpucomm.analysis import tolerances
    return tolerances


def test_a_failed_session_is_left_out_and_counted(tol, tmp_path, capsys):
    out = tmp_path / "p.yaml"
    assert tol.main(_write(tmp_path, 5, failed={4}) + ["--yaml", str(out), "--md", str(tmp_path / "t.md")]) == 0
    err = capsys.readouterr().err
    assert "test cases of failed runs left out" in err
    lower = yaml.safe_load(out.read_text())[CHECK]["local:h200x2"][VAR][1]
    assert lower > -0.2, lower  # -1.333 when the failed run was pooled
    assert "| 4 |" in (tmp_path / "t.md").read_text()


def test_fewer_than_three_healthy_runs_propose_nothing_without_force(tol, tmp_path, capsys):
    paths = _write(tmp_path, 3, failed={2})
    out = tmp_path / "p.yaml"
    assert tol.main(paths + ["--yaml", str(out)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip().splitlines()
    assert "fewer than 3" in err[-1] and "--force" in err[-1] and not out.exists()
    assert tol.main(paths + ["--yaml", str(out), "--force"]) == 0
    assert sum("warning" in line for line in capsys.readouterr().err.splitlines()) == 1


def test_a_bandwidth_bound_below_zero_is_never_proposed(tol):
    assert tol.propose([10.0, 10.0, 10.0, 1.0], "GB/s") is None
    ref = tol.propose([10.0, 10.5, 9.5], "GB/s")
    assert ref is not None and ref[1] > -1


@pytest.mark.parametrize("where", ["dir", "missing-dir"])
def test_an_output_that_cannot_be_written_is_one_line(tol, tmp_path, capsys, where):
    target = tmp_path if where == "dir" else tmp_path / "no" / "such" / "p.yaml"
    assert tol.main(_write(tmp_path, 3) + ["--yaml", str(target)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--yaml" in err[0]


def _full_disk(argv, cwd):
    """``gpucomm ARGV`` where every file write fails as on a full disk (a file size limit of 0
    bytes: EFBIG where a full disk says ENOSPC; both fail in write or close, not in open)."""
    import resource
    import subprocess
    import sys

    def no_room():
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    return subprocess.run([sys.executable, "-m", "gpucomm", *map(str, argv)], cwd=cwd, preexec_fn=no_room,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)


def test_a_full_disk_is_one_line_and_no_empty_file(tmp_path):
    """Old: `tolerances --md` on a full disk said "cannot write None" and left a 0-byte file."""
    md = tmp_path / "t.md"
    run = _full_disk(["tolerances", *_write(tmp_path, 3), "--md", md], tmp_path)
    assert run.returncode == EXIT_BAD_INPUT, run.stderr
    assert run.stderr.strip() == f"gpucomm tolerances: error: cannot write {md}: File too large"
    assert not md.exists()


@pytest.mark.parametrize("opt", ["--yaml", "--md"])
def test_an_empty_output_name_is_refused(tol, tmp_path, capsys, opt):
    """Old: `--yaml ''` exited 0 and wrote nothing."""
    assert tol.main(_write(tmp_path, 3) + [opt, ""]) == EXIT_BAD_INPUT
    said = capsys.readouterr().err.strip()
    assert said == f"gpucomm tolerances: error: {opt} '': an empty file name: give a file to write"


def test_the_usage_names_the_command(tol, capsys):
    """Old: "usage: gpucomm [-h] ...", and the description cut after "the spread of every perf"."""
    with pytest.raises(SystemExit):
        tol.main(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: gpucomm tolerances [-h]")
    assert "as a table and as YAML for config/references/." in " ".join(out.split())
