"""``gpucomm report``'s verdict is ReFrame's: the committed health sessions replayed night by night,
and the runs that tested nothing (no test case, all skipped, a --dry-run) exit non-zero."""

import copy
import json
from pathlib import Path

import pandas as pd
import pytest

from gpucomm import constants
from gpucomm.analysis.report import build_parser, main

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "tests" / "data" / "h200x2-runs"  # the reference node's runs (copies: its README.md)
#: health-mode sessions of the reference node, in the order they ran: 2 of 12-health (run against
#: the references before tolerances were derived: the first failed), 3 of 13-health-validation
#: (judged by the derived ones: the second failed)
HEALTH = [RESULTS / "health" / "12-health" / f"report-health-{i}.json" for i in (1, 6)] + [
    RESULTS / "health" / "13-health-validation" / f"report-health-{i}.json" for i in (1, 2, 3)]
VALIDATION = 2  # HEALTH's first session of 13-health-validation
SUITE = RESULTS / "02-suite" / "report.json"


def load(path):
    with open(path) as fp:
        return json.load(fp)


def report(args, capsys):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def reframe_failed(doc):
    """ReFrame's own verdict on a session: any test case of its last run not passing."""
    return any(tc["result"] not in ("pass", "skip", "xfail") for tc in doc["runs"][-1]["testcases"])


def test_replay_health_sessions(tmp_path, capsys):
    """Each committed health session in order, with the earlier ones as history: the report's
    verdict and exit code are ReFrame's, every time.  (Before: a flat 10 % against the last 5 runs
    said FAIL for 6 of the 10 sessions of 13-health-validation, where ReFrame failed 1, and the
    report exited 0 either way.)"""
    verdicts = []
    for i, path in enumerate(HEALTH):
        doc = load(path)
        assert doc["session_info"]["num_failures"] == sum(
            tc["result"] == "fail" for tc in doc["runs"][-1]["testcases"])
        args = [path, "-o", tmp_path / f"r{i}", "-q", "--paper", "none"]
        if i:
            args += ["--history", *HEALTH[:i]]
        code, out, _ = report(args, capsys)
        failed = reframe_failed(doc)
        want = "FAIL" if failed else "PASS"
        assert out.startswith(f"gpucomm health: {want} "), (path, out)
        assert code == (constants.EXIT_REPORT_FAIL if failed else constants.EXIT_OK), (path, out)
        # the trend is information: flags beyond the references' bounds never decide the verdict
        nightly = pd.read_csv(tmp_path / f"r{i}" / "trend.csv")
        assert set(nightly["status"]) <= {"ok", "new", "regressed", "improved", "ref-fail", "no bound"}
        assert ("ref-fail" in set(nightly["status"])) <= failed
        if i:
            assert (nightly["runs"] == min(i, 5)).all()
        verdicts.append(failed)
    assert verdicts == [True, False, False, True, False]


def test_trend_uses_reference_bounds_not_a_flat_ten_percent(tmp_path, capsys):
    """A noisy variable whose reference allows +150 % is not flagged at +11 %; a tight one is."""
    night = load(HEALTH[VALIDATION])
    earlier, tonight = copy.deepcopy(night), copy.deepcopy(night)
    earlier["session_info"].update(uuid="earlier", time_end_unix=night["session_info"]["time_end_unix"] - 86400)
    for tc in earlier["runs"][0]["testcases"]:
        if tc["job_completion_time_unix"]:
            tc["job_completion_time_unix"] -= 86400
    tc = next(tc for tc in tonight["runs"][0]["testcases"] if tc["name"] == "HealthCheck %operation=pingpong")
    key = next(k for k in tc["perfvalues"] if k.endswith(":host_latency_8B"))
    val = tc["perfvalues"][key]
    assert val[3] is not None and val[3] > 0.2  # the reference's upper bound: wide
    val[0] *= 1.11
    tight = next(k for k, v in tc["perfvalues"].items() if v[2] is not None and -0.1 < v[2] < 0)
    tc["perfvalues"][tight][0] *= 1 + tc["perfvalues"][tight][2] * 1.5  # beyond its lower bound ...
    tc["perfvalues"][tight][5] = "pass"  # ... (as a trend: tonight's value against the earlier one)
    (tmp_path / "earlier.json").write_text(json.dumps(earlier))
    (tmp_path / "tonight.json").write_text(json.dumps(tonight))
    code, out, _ = report([tmp_path / "tonight.json", "--history", tmp_path / "earlier.json", "-o", tmp_path / "r",
                           "-q", "--paper", "none"], capsys)
    nightly = pd.read_csv(tmp_path / "r" / "trend.csv").set_index(["test", "var"])
    row = nightly.loc[("HealthCheck %operation=pingpong", "host_latency_8B")]
    assert row["change"] == pytest.approx(0.11) and row["status"] == "ok"
    assert row["tolerance"] == pytest.approx(val[3])
    assert nightly.loc[("HealthCheck %operation=pingpong", tight.rsplit(":", 1)[1]), "status"] == "regressed"
    assert code == constants.EXIT_OK and out.startswith("gpucomm health: PASS")  # ReFrame passed it
    assert "trend (information, not the verdict)" in out and "regressed: HealthCheck %operation=pingpong" in out


def all_skipped(doc):
    doc = copy.deepcopy(doc)
    for tc in doc["runs"][0]["testcases"]:
        tc.update(result="skip", perfvalues={}, fail_reason="no GPU here")
    return doc


def dry_run(doc):
    """What ReFrame 4.10's --dry-run writes: every case 'pass', no job, no values."""
    doc = copy.deepcopy(doc)
    doc["session_info"]["cmdline"] += " --dry-run"
    for tc in doc["runs"][0]["testcases"]:
        if tc["result"] != "skip":
            tc.update(result="pass", jobid=None, job_completion_time_unix=None,
                      perfvalues={k: [None] + v[1:5] + [None] for k, v in (tc["perfvalues"] or {}).items()})
    return doc


@pytest.mark.parametrize("make, status, code", [
    (all_skipped, "NOTHING RAN", constants.EXIT_REPORT_NOTHING_RAN),
    (lambda d: dict(d, runs=[dict(d["runs"][0], testcases=[])]), "NOTHING RAN", constants.EXIT_REPORT_NOTHING_RAN),
    (dry_run, "DRY RUN", constants.EXIT_REPORT_DRY_RUN),
])
def test_runs_that_tested_nothing(make, status, code, tmp_path, capsys):
    """Before: 'PASS (0 of 0 nodes failing)' and exit 0 for an all-skipped run; a dry run counted
    as a healthy night."""
    (tmp_path / "run.json").write_text(json.dumps(make(load(SUITE))))
    got, out, _ = report([tmp_path / "run.json", "-o", tmp_path / "r", "-q", "--paper", "none"], capsys)
    assert got == code and out.startswith(f"gpucomm health: {status} (")


def test_dry_run_detected_without_the_flag(tmp_path, capsys):
    """A dry-run session read back from storage or a copied report: no job ran, no value."""
    doc = dry_run(load(SUITE))
    doc["session_info"]["cmdline"] = "reframe -C config/settings.py -c checks/ -r"
    (tmp_path / "run.json").write_text(json.dumps(doc))
    got, out, _ = report([tmp_path / "run.json", "-o", tmp_path / "r", "-q", "--paper", "none"], capsys)
    assert got == constants.EXIT_REPORT_DRY_RUN and "--dry-run" in out


PERFLOG_HEADER = ("result|job_completion_time|job_completion_time_unix|jobid|system|partition|environ|name|"
                  "job_nodelist|latency_8B_value|latency_8B_unit|latency_8B_ref|latency_8B_lower_thres|"
                  "latency_8B_upper_thres\n")


def test_dry_run_perflog_lines_are_no_healthy_night(tmp_path, capsys):
    """ReFrame writes perflog lines with result 'pass' in a --dry-run: no job, no value."""
    log = tmp_path / "PingPongCheck.log"
    real = ("pass|2026-11-29T05:54:47|1795931687.8|12|local|h200x2|default|PingPongCheck %method=host|vm|1.0|us|"
            "1.2|null|1.5\n")
    dry = "pass|2026-11-30T05:54:47+00:00|null||local|h200x2|default|PingPongCheck %method=host||None|us|1.2|null|1.5\n"
    log.write_text(PERFLOG_HEADER + real + dry)
    code, out, _ = report([log, "-o", tmp_path / "r", "-q", "--paper", "none"], capsys)
    assert code == constants.EXIT_REPORT_DRY_RUN and out.startswith("gpucomm health: DRY RUN (1 of 1 test cases")
    # as history, a dry-run line adds no value
    log.write_text(PERFLOG_HEADER + dry.replace("2026-11-30", "2026-11-28") + real)
    code, out, _ = report([log, "-o", tmp_path / "r2", "-q", "--paper", "none"], capsys)
    assert code == constants.EXIT_OK
    assert (pd.read_csv(tmp_path / "r2" / "trend.csv")["runs"] == 0).all()


def test_no_verdict_without_reframe_results(tmp_path, capsys):
    folder = tmp_path / "T_1"
    folder.mkdir()
    rec = {"op": "pingpong", "method": "host", "size": 8, "nranks": 2, "validated": True,
           "time_us": {"median": 1.0, "p05": 0.9, "p95": 1.1, "mean": 1.0}, "goodput_GBps": 0.008}
    (folder / "gpucomm_results.json").write_text(json.dumps({"meta": {"op": "pingpong"}, "results": [rec]}))
    code, out, err = report([tmp_path, "-o", tmp_path / "r", "-q", "--paper", "none"], capsys)
    assert code == constants.EXIT_REPORT_NO_VERDICT and out.startswith("gpucomm health: NO VERDICT")
    assert "system and partition unknown" in err


def test_exit_codes_documented():
    text = build_parser().format_help()
    for name in ("EXIT_REPORT_FAIL", "EXIT_REPORT_NOTHING_RAN", "EXIT_REPORT_DRY_RUN", "EXIT_REPORT_NO_VERDICT",
                 "EXIT_BAD_INPUT", "EXIT_INTERNAL"):
        assert f"{getattr(constants, name)} " in text, name
    codes = [getattr(constants, n) for n in dir(constants) if n.startswith("EXIT_")]
    assert len(codes) == len(set(codes))  # every exit code of gpucomm means one thing
