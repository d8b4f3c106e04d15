"""gpucomm report under bad input: -o never overwrites a user's files, an unknown --paper-system
is refused with the valid names, a test case without a result is no PASS, and perf values that
are not numbers are flagged, never dropped silently."""

import fcntl
import json
import math
import os
from pathlib import Path

import pytest

from gpucomm import constants
from gpucomm.analysis.report import OUTPUT_MARKER, main

REPO = Path(__file__).resolve().parents[2]
H200X2 = REPO / "tests" / "data" / "h200x2-runs"  # the reference node's runs
PASSING = H200X2 / "health" / "13-health-validation" / "report-health-1.json"


def passing():
    doc = json.loads(PASSING.read_text())
    assert all(tc["result"] in ("pass", "skip") for tc in doc["runs"][-1]["testcases"])
    return doc


def report(args, capsys):
    code = main([str(a) for a in args] + ["-q", "--paper", "none"])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_o_into_a_folder_of_the_users_files_is_refused(tmp_path, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "index.html").write_text("my page")
    code, _, err = report([PASSING, "-o", mine], capsys)
    assert code == constants.EXIT_BAD_INPUT and len(err.strip().splitlines()) == 1
    assert (mine / "index.html").read_text() == "my page"


def test_o_into_an_empty_or_its_own_folder_writes_twice(tmp_path, capsys):
    out = tmp_path / "rep"
    out.mkdir()
    assert report([PASSING, "-o", out], capsys)[0] == constants.EXIT_OK
    assert (out / OUTPUT_MARKER).exists() and (out / "index.html").exists()
    assert report([PASSING, "-o", out], capsys)[0] == constants.EXIT_OK


def test_a_second_report_into_a_folder_being_written_is_refused(tmp_path, capsys):
    """Old: two reports into one new folder at once both wrote there, one's files lost."""
    out = tmp_path / "rep"
    out.mkdir()
    with open(out / OUTPUT_MARKER, "a") as first:  # a first report, writing into it now
        fcntl.flock(first, fcntl.LOCK_EX)
        code, _, err = report([PASSING, "-o", out], capsys)
    assert code == constants.EXIT_BAD_INPUT and len(err.strip().splitlines()) == 1, err
    assert "another gpucomm report is writing into it now" in err
    assert os.listdir(out) == [OUTPUT_MARKER]


def test_a_folder_made_for_nothing_usable_is_removed(tmp_path, capsys):
    (tmp_path / "empty.json").write_text("{}")
    code, _, _ = report([tmp_path / "empty.json", "-o", tmp_path / "rep"], capsys)
    assert code == constants.EXIT_BAD_INPUT and not (tmp_path / "rep").exists()


def test_o_onto_a_file_is_one_line_exit_2(tmp_path, capsys):
    target = tmp_path / "file.txt"
    target.write_text("x")
    code, _, err = report([PASSING, "-o", target], capsys)
    assert code == constants.EXIT_BAD_INPUT and len(err.strip().splitlines()) == 1 and "file" in err
    assert target.read_text() == "x"


def test_an_unknown_paper_system_is_refused_with_the_valid_ones(tmp_path, capsys):
    code = main([str(PASSING), "-o", str(tmp_path / "r"), "-q", "--paper-system", "moon"])
    err = capsys.readouterr().err
    assert code == constants.EXIT_BAD_INPUT and "moon" in err and "alps" in err


def test_a_test_case_without_result_is_no_pass(tmp_path, capsys):
    doc = passing()
    tc = next(t for t in doc["runs"][-1]["testcases"] if t["result"] == "pass")
    tc["result"] = None
    path = tmp_path / "null.json"
    path.write_text(json.dumps(doc))
    code, out, err = report([path, "-o", tmp_path / "r"], capsys)
    assert code == constants.EXIT_REPORT_FAIL, (code, out)
    assert "no result" in err


@pytest.mark.parametrize("bad", ["abc", math.nan])
def test_perf_values_that_are_not_numbers_are_flagged(tmp_path, capsys, bad):
    doc = passing()
    tc = next(t for t in doc["runs"][-1]["testcases"] if t.get("perfvalues"))
    key = next(iter(tc["perfvalues"]))
    tc["perfvalues"][key][0] = bad
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(doc))
    _, _, err = report([path, "-o", tmp_path / "r"], capsys)
    assert "not numbers" in err and key.rsplit(":", 1)[-1] in err


def test_a_night_gap_beyond_a_year_is_one_line_exit_2(tmp_path, capsys):
    """Old: --night-gap 1e308 (inf seconds) ended in "internal error: KeyError: np.int64(-1)"."""
    code, _, err = report([PASSING, "-o", tmp_path / "rep", "--night-gap", "1e308"], capsys)
    assert code == constants.EXIT_BAD_INPUT
    assert err.strip() == (f"gpucomm report: error: --night-gap 1e+308: must be at most "
                           f"{constants.NIGHT_GAP_MAX_H} hours (a year)")
    assert not (tmp_path / "rep").exists()


@pytest.mark.parametrize("existing", [False, True])
def test_a_full_disk_is_one_line_and_leaves_no_half_report(tmp_path, existing):
    """Old: "internal error: OSError: [Errno 28] No space left on device", exit 1, a 0-byte
    health.txt (or drift.csv) left.  Now one line, exit 2, nothing of the report kept (a folder
    it made is removed; in its own earlier folder only the marker stays)."""
    import resource
    import subprocess
    import sys
    out = tmp_path / "rep"
    if existing:
        out.mkdir()
        (out / OUTPUT_MARKER).write_text("")

    def no_room():  # every write fails as on a full disk (EFBIG where a full disk says ENOSPC)
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    run = subprocess.run([sys.executable, "-m", "gpucomm", "report", str(PASSING), "-o", str(out), "-q",
                          "--paper", "none"], preexec_fn=no_room, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, timeout=300)
    assert run.returncode == constants.EXIT_BAD_INPUT, run.stderr
    assert run.stderr.strip() == (f"gpucomm report: error: -o {out}: cannot write the report (File too large): "
                                  "nothing of it kept")
    assert os.listdir(out) == [OUTPUT_MARKER] if existing else not out.exists()


def test_a_tolerance_that_is_no_number_is_one_line(tmp_path, capsys):
    """Old: "could not convert string to float: 'abc'", naming no option."""
    code, _, err = report([PASSING, "-o", tmp_path / "rep", "--tolerance", "x*=abc"], capsys)
    assert code == constants.EXIT_BAD_INPUT
    assert err.strip() == "gpucomm report: error: tolerance 'x*=abc' is not a fraction >= 0"


def test_records_with_no_positive_size_or_time_are_left_out_saying_so(tmp_path, capsys):
    """Old: sizes -8 or 'abc' dropped silently, times 0, negative or NaN plotted (numpy's "divide
    by zero" warning printed).  Now one warning naming them; the good records are plotted."""
    case = tmp_path / "case"
    case.mkdir()
    recs = [{"op": "pingpong", "method": "host", "size": size, "nranks": 2, "goodput_GBps": 1.0, "validated": True,
             "time_us": {"median": t, "p05": 1, "p95": 1, "mean": 1, "min": 1, "max": 1}}
            for size, t in ((8, 1.0), (16, 0), (32, -1.0), (64, float("nan")), (-8, 1.0), ("abc", 1.0), (128, 2.0))]
    results = case / "gpucomm_results.json"
    results.write_text(json.dumps({"meta": {"op": "pingpong", "method": "host"}, "summary": {"ok": True},
                                   "results": recs}))
    code, _, err = report([results, "-o", tmp_path / "rep"], capsys)
    assert code == constants.EXIT_REPORT_NO_VERDICT, err
    assert f"gpucomm report: warning: {results}: 5 record(s) left out, not a positive number (size -8, 'abc'; " \
           "time 0.0, -1.0, nan)" in err
    assert "divide by zero" not in err and "RuntimeWarning" not in err
    sweeps = (tmp_path / "rep" / "sweeps.csv").read_text().splitlines()
    assert len(sweeps) == 3  # the header, 8 B and 128 B


def test_stored_sessions_of_a_database_that_does_not_exist_create_none(tmp_path, capsys, monkeypatch):
    """Old: ReFrame's stored-session lookup created an empty database file at a mistyped
    RFM_SQLITE_DB_FILE (a ReFrame quirk, docs/results.md); now the report says there is none."""
    db = tmp_path / "typo.db"
    monkeypatch.setenv("RFM_SQLITE_DB_FILE", str(db))
    code, _, err = report(["--stored-sessions", "-o", tmp_path / "rep"], capsys)
    assert code == constants.EXIT_BAD_INPUT
    assert f"no results database at {db}: nothing stored there (a wrong RFM_SQLITE_DB_FILE?)" in err
    assert not db.exists()
