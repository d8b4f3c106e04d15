"""``gpucomm report`` on ReFrame's results storage: a real database, written by ReFrame itself
(RFM_ENABLE_RESULTS_STORAGE, RFM_SQLITE_DB_FILE) on a tiny local check, read back through
``reframe --describe-stored-sessions`` (ReFrame's public interface), never its sqlite tables."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from gpucomm import constants
from gpucomm.analysis.report import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from reframe_helpers import clean_env  # noqa: E402

#: a check that needs nothing: echo, one perf variable against a per-partition reference
TINY = '''
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import performance_function, sanity_function, variable


@rfm.simple_test
class TinyCheck(rfm.RunOnlyRegressionTest):
    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    executable = "echo"
    executable_opts = ["ok"]
    latency = variable(float, value=5.0)
    reference = {"*": {"latency_8B": (5.0, None, 0.1, "us")}}

    @sanity_function
    def ran(self):
        return sn.assert_found(r"ok", self.stdout)

    @performance_function("us")
    def latency_8B(self):
        return self.latency
'''
MAIN = "import sys; from reframe.frontend.cli import main; sys.argv[0] = 'reframe'; sys.exit(main())"


@pytest.fixture(scope="module")
def storage(tmp_path_factory):
    """Three stored sessions: pass (5.0 us), pass (5.4 us, +8 %: inside the 10 % bound), fail (6.0 us)."""
    tmp = tmp_path_factory.mktemp("storage")
    (tmp / "tiny.py").write_text(TINY)
    db = tmp / "results.db"
    env = clean_env(RFM_ENABLE_RESULTS_STORAGE="y", RFM_SQLITE_DB_FILE=db, RFM_SAVE_LOG_FILES="n")
    for value in (5.0, 5.4, 6.0):
        proc = subprocess.run([sys.executable, "-c", MAIN, "-c", tmp / "tiny.py", "-r", "--prefix", tmp / "rfm",
                               "-S", f"latency={value}"], cwd=tmp, env=env, capture_output=True, text=True,
                              timeout=300)
        assert "TinyCheck" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert proc.returncode == (0 if value < 5.5 else 1)
    return db, env


def report(args, capsys):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_database_path(storage, tmp_path, capsys):
    db, _ = storage
    code, out, err = report([db, "-o", tmp_path / "r", "-q", "--paper", "none"], capsys)
    # the newest stored session is this run: ReFrame failed it, so does the report
    assert code == constants.EXIT_REPORT_FAIL, out + err
    assert out.startswith("gpucomm health: FAIL (ReFrame failed 1 of 1 test cases run)")
    assert "latency_8B = 6 us outside its ReFrame reference [-inf, 5.5] us" in out
    nightly = pd.read_csv(tmp_path / "r" / "trend.csv")
    row = nightly.set_index("var").loc["latency_8B"]
    # the two earlier sessions are its history (their centre: the geometric mean of 5.0 and 5.4);
    # system and partition are ReFrame's (generic:default)
    assert row["runs"] == 2 and row["baseline"] == pytest.approx(5.2, rel=1e-3) and row["status"] == "ref-fail"
    assert (nightly["system"] == "generic").all() and (nightly["partition"] == "default").all()
    inputs = pd.read_csv(tmp_path / "r" / "inputs.csv")
    assert inputs.set_index("kind").loc["database", "note"] == "3 sessions"


def test_stored_sessions_located_by_reframe(storage, tmp_path, capsys, monkeypatch):
    """--stored-sessions: ReFrame finds its database (RFM_SQLITE_DB_FILE here); a query selects."""
    db, env = storage
    monkeypatch.setenv("RFM_SQLITE_DB_FILE", str(db))
    code, out, _ = report(["--stored-sessions", "-o", tmp_path / "r", "-q", "--paper", "none"], capsys)
    assert code == constants.EXIT_REPORT_FAIL
    assert pd.read_csv(tmp_path / "r" / "trend.csv")["runs"].tolist() == [2]


def test_bad_databases(tmp_path, capsys, monkeypatch):
    bad = tmp_path / "bad.db"
    bad.write_text("not sqlite")
    code, _, err = report([bad, "-o", tmp_path / "r", "-q"], capsys)
    assert code == constants.EXIT_BAD_INPUT and "bad.db: not a ReFrame results database" in err
    monkeypatch.setenv("RFM_SQLITE_DB_FILE", str(bad.with_suffix(".sqlite3")))
    monkeypatch.setenv("RFM_ENABLE_RESULTS_STORAGE", "y")
    code, _, err = report(["--stored-sessions", "-o", tmp_path / "r", "-q"], capsys)
    assert code == constants.EXIT_BAD_INPUT and "nothing usable found" in err


def test_real_dry_run(tmp_path, capsys):
    """ReFrame 4.10's --dry-run: its report and its perflog lines ('pass', no job, no value) are a
    dry run, exit 8, never a healthy night."""
    (tmp_path / "tiny.py").write_text(TINY)
    env = clean_env(RFM_SAVE_LOG_FILES="n")
    proc = subprocess.run([sys.executable, "-c", MAIN, "-c", tmp_path / "tiny.py", "--dry-run", "--prefix",
                           tmp_path / "rfm", "--report-file", tmp_path / "dry.json"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    for inputs in ([tmp_path / "dry.json"], [tmp_path / "rfm" / "perflogs"]):
        code, out, _ = report([*inputs, "-o", tmp_path / "r", "-q", "--paper", "none"], capsys)
        assert code == constants.EXIT_REPORT_DRY_RUN and out.startswith("gpucomm health: DRY RUN"), out
        assert "PASS" not in out
