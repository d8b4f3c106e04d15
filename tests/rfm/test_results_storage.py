"""ReFrame's own machinery for results (issue 18): sessions stored in the results database
(config/results.py), --performance-compare between two sessions, the modes' per-session
directories (--timestamp) and report file, a perflog whose header never follows -S, and the
opt-in httpjson handler."""

import json
import runpy
import subprocess
import sys

from reframe_helpers import _MAIN, CONFIG, REPO, clean_env

RESULTS = runpy.run_path(str(REPO / "config" / "results.py"))


def run_rfm(home, *args, **env):
    """ReFrame with the config, HOME (where the modes' reports go) and the database in ``home``."""
    cmd = [sys.executable, "-c", _MAIN, "-C", str(CONFIG), *map(str, args)]
    env = clean_env(HOME=home, RFM_ENABLE_RESULTS_STORAGE="y", RFM_SQLITE_DB_FILE=home / "results.db",
                    OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1, **env)
    return subprocess.run(cmd, cwd=REPO, env=env, timeout=600, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def test_storage_is_on_at_a_stable_path():
    conf = runpy.run_path(str(CONFIG))["site_configuration"]
    assert conf["storage"] == [{"enable": True, "sqlite_db_file": RESULTS["RESULTS_DB"]}]
    assert RESULTS["RESULTS_DB"] == "${HOME}/.reframe/reports/gpucomm.db"
    (logging,) = conf["logging"]
    assert logging["perflog_multiline"] is True
    assert [h["type"] for h in logging["handlers_perflog"]] == ["filelog"]  # httpjson: opt-in


def test_httpjson_handler_only_when_asked(monkeypatch):
    monkeypatch.setenv("GPUCOMM_PERFLOG_URL", "http://dashboard.invalid:9200/gpucomm/_doc")
    conf = runpy.run_path(str(REPO / "config" / "results.py"))["site_configuration"]
    (_, http) = conf["logging"][0]["handlers_perflog"]
    assert http["type"] == "httpjson" and http["url"] == "http://dashboard.invalid:9200/gpucomm/_doc"


def test_nightly_sessions_are_kept_and_compared(tmp_path):
    prefix = tmp_path / "p"
    one = ("-c", "checks/health.py", "-n", "^HealthCheck%operation=pingpong", "-r", "--prefix", prefix)
    first = run_rfm(tmp_path, *one, "--mode", "health", "-S", "sizes=8,1M")
    assert first.returncode == 0, first.stdout[-3000:]
    second = run_rfm(tmp_path, *one, "--mode", "nightly", "-S", "sizes=8,1M,64M")  # the same mode
    assert second.returncode == 0, second.stdout[-3000:]
    uuids = [ln.rsplit(" ", 1)[1] for run in (first, second) for ln in run.stdout.splitlines()
             if ln.startswith("Current session stored with UUID:")]
    assert len(uuids) == 2
    # --timestamp: each session its own output directory, none overwritten
    assert len(list((prefix / "output").iterdir())) == 2
    # the per-session report of the modes, numbered by ReFrame
    reports = sorted((tmp_path / ".reframe" / "reports").glob("gpucomm-run-*.json"))
    assert [r.name for r in reports] == ["gpucomm-run-0.json", "gpucomm-run-1.json"]
    assert json.loads(reports[1].read_text())["session_info"]["uuid"] == uuids[1]
    # the perflog: one line per perf variable, its header the same whatever -S said
    (log,) = (prefix / "perflogs" / "local" / "cpu").glob("HealthCheck*.log")
    lines = log.read_text().splitlines()
    assert lines[0] == "|".join(f[6:] if f.startswith("check_") else f for f in RESULTS["PERFLOG_FIELDS"])
    assert lines.count(lines[0]) == 1 and not list(log.parent.glob("*.h0"))
    assert sum("|host_latency_8B|" in ln for ln in lines) == 2
    # night to night: ReFrame's comparison of the two stored sessions
    cmp = run_rfm(tmp_path, f"--performance-compare={uuids[1]}/{uuids[0]}/mean:/+result",
                  "-n", "HealthCheck", "--table-format=csv")
    assert cmp.returncode == 0, cmp.stdout[-3000:]
    rows = [ln.split(",") for ln in cmp.stdout.splitlines() if ln.startswith("HealthCheck")]
    assert sorted(r[2] for r in rows) == ["host_goodput_1MiB", "host_latency_8B"]  # in both sessions
