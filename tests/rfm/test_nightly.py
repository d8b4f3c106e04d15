"""The cron entry point (gpucomm nightly) ends in the report's verdict, also when it is stopped
(reframe and its ranks end with it) or given a folder in use, and -S input that ReFrame only
warns about or answers with a traceback is a failure or one line: a typo'd name fails the checks
naming it, a value of the wrong type is one line and exit 2, a size list with a space is one word
of the job script."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from gpucomm import constants, procs
from gpucomm.analysis import nightly
from reframe_helpers import (
    REPO,
    clean_env,
    dry_runs,
    job_script,
    payload_ranks_under,
    reframe,
    start_with_ranks,
    wait_for,
)

ROOT_OK = dict(OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)


def nightly_run(tmp_path, *args):
    run = subprocess.run([sys.executable, "-m", "gpucomm", "nightly", "--out", str(tmp_path / "night"), *args],
                         cwd=REPO, env=clean_env(**ROOT_OK), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, timeout=600)
    assert "Traceback" not in run.stdout, run.stdout[-3000:]
    return run


def test_nothing_selected_is_nothing_ran(tmp_path):
    run = nightly_run(tmp_path, "-n", "NoSuchCheck")
    assert run.returncode == constants.EXIT_REPORT_NOTHING_RAN, run.stdout[-2000:]
    assert "NOTHING RAN" in run.stdout


def test_a_clean_night_passes_and_a_typo_fails_naming_it(tmp_path):
    run = nightly_run(tmp_path / "a", "-n", "^HealthCheck", "-S", "sizes=8")
    assert run.returncode == constants.EXIT_OK, run.stdout[-3000:]
    assert "gpucomm health: PASS" in run.stdout
    run = nightly_run(tmp_path / "b", "-n", "^HealthCheck", "-S", "sizes=8", "-S", "sizez=8")
    assert run.returncode == constants.EXIT_REPORT_FAIL, run.stdout[-3000:]
    assert "-S sizez: no check has such a variable" in run.stdout


def test_a_misspelled_check_in_S_fails_the_night_naming_it(tmp_path):
    """Old: `-S PingpongCheck.iters=5` ran the default iterations without a word, and passed."""
    run = nightly_run(tmp_path, "-n", "^HealthCheck%operation=pingpong", "-S", "sizes=8", "-S", "PingpongCheck.iters=5")
    assert run.returncode == constants.EXIT_REPORT_FAIL, run.stdout[-3000:]
    assert "-S PingpongCheck.iters: no check of this run is called PingpongCheck (PingPongCheck?)" in run.stdout


def test_a_night_folder_that_cannot_be_made_is_exit_2(tmp_path):
    (tmp_path / "file").write_text("")
    run = nightly_run(tmp_path / "file", "-n", "NoSuchCheck")
    assert run.returncode == constants.EXIT_BAD_INPUT and "gpucomm nightly: error" in run.stdout


@pytest.mark.parametrize("setting", ["iters=abc", "emulate_nodes=maybe", "budget=soon",
                                     # ReFrame's own variables: old, ReFrame's traceback
                                     "time_limit=abc", "HealthCheck.num_tasks=x"])
def test_a_value_of_the_wrong_type_is_one_line_exit_2(setting):
    run = reframe("-c", "checks/pingpong.py", "-l", "-S", setting)
    assert run.returncode == constants.EXIT_BAD_INPUT, run.stdout[-2000:]
    assert "Traceback" not in run.stdout
    (line,) = [ln for ln in run.stdout.splitlines() if "gpucomm: error" in ln]
    assert setting.split("=")[0] in line


def test_sizes_with_a_space_are_one_word_of_the_job_script(tmp_path_factory):
    cases = dry_runs({"spaced": ("-c", "checks/pingpong.py", "-n", "^PingPongCheck%method=host",
                                 "-S", "sizes=8, 1K")}, tmp_path_factory, clean_env())
    (case,) = cases["spaced"]
    assert "--sizes '8, 1K'" in job_script(case)




def test_sigterm_ends_reframe_and_its_ranks_with_a_verdict(tmp_path):
    """A cron ``timeout`` (SIGTERM) mid-run, a rank hung: old, reframe lived on with parent 1 and
    both ranks ran on, no verdict.  Meanwhile a second night given the same --out refuses (old:
    both ran, the second's report replaced the first's)."""
    proc, prefix = None, tmp_path
    try:
        proc, argv, prefix = start_with_ranks(lambda i: _hung_night(tmp_path / f"try{i}"),
                                              clean_env(GPUCOMM_TEST_HANG="1:8", **ROOT_OK))
        second = subprocess.run(argv, cwd=REPO, env=clean_env(**ROOT_OK), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, timeout=120)
        assert second.returncode == constants.EXIT_BAD_INPUT, second.stdout[-2000:]
        assert "report.json exists (an earlier night's, or one running now): give a new --out" in second.stdout
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 128 + signal.SIGTERM, out[-3000:]
        (verdict,) = [ln for ln in out.splitlines() if ln.startswith("gpucomm nightly: ")]
        assert verdict.startswith("gpucomm nightly: FAIL: stopped by SIGTERM: reframe ended"), verdict
        assert wait_for(lambda: not payload_ranks_under(prefix), 10), payload_ranks_under(prefix)
    finally:
        for pid in payload_ranks_under(tmp_path, launchers=True):
            os.kill(pid, signal.SIGKILL)
        if proc is not None and proc.poll() is None:
            proc.kill()


def _hung_night(top):
    """(argv, prefix) of a gpucomm nightly under ``top`` of one host ping-pong at 8 B."""
    night, prefix = top / "night", top / "prefix"
    return [sys.executable, "-m", "gpucomm", "nightly", "--out", str(night), "-n", "^HealthCheck%operation=pingpong",
            "-S", "sizes=8", "--prefix", str(prefix)], prefix


def test_kill_9_of_the_night_ends_reframe_and_its_ranks(tmp_path):
    """`kill -9` of gpucomm nightly (cron's `timeout -s KILL`, the OOM killer), a rank hung: old,
    reframe (its own session, parent 1) and both ranks ran on, report.json a 0-byte claim until
    reframe ended.  Now reframe dies with its parent (SIGTERM, as a stop signal is passed on): it
    cancels, writes its report, and its ranks end with it."""
    proc, under = None, {}
    try:
        proc, _, prefix = start_with_ranks(lambda i: _hung_night(tmp_path / f"try{i}"),
                                           clean_env(GPUCOMM_TEST_HANG="1:8", **ROOT_OK), output=False)
        under = procs.descendants(proc.pid)
        assert len(under) >= 3  # reframe, mpirun, the ranks
        proc.kill()
        proc.wait(timeout=30)
        assert wait_for(lambda: not procs.still_running(under), 30), procs.still_running(under)
        assert (prefix.parent / "night" / "report.json").stat().st_size > 0  # reframe's report, not the claim
    finally:
        for pid in procs.still_running(under):
            os.kill(pid, signal.SIGKILL)
        if proc is not None and proc.poll() is None:
            proc.kill()


def test_a_stop_signal_kills_what_outlives_the_grace(monkeypatch):
    """SIGHUP to the runner: its child ignores the SIGTERM passed on, and a grandchild in a
    session of its own (as a local job) outlives it: both are killed after the grace."""
    monkeypatch.setattr(procs, "NIGHTLY_STOP_GRACE_S", 1)
    monkeypatch.setattr(procs, "NIGHTLY_ORPHAN_GRACE_S", 1)
    child = ("import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
             "subprocess.Popen([sys.executable, '-c', 'import signal, time; "
             "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)'], start_new_session=True); "
             "print('ERROR: nothing', flush=True); time.sleep(600)")
    run = procs.ReframeRun([sys.executable, "-c", child])
    previous = signal.signal(signal.SIGHUP, run.stop)
    try:
        threading.Timer(2, os.kill, (os.getpid(), signal.SIGHUP)).start()
        started = time.monotonic()
        rc = run.run()
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert rc == -signal.SIGKILL and run.signal == signal.SIGHUP and run.killed == 1
    assert run.errors == ["ERROR: nothing"] and time.monotonic() - started < 30
    assert not procs.still_running(run.under)


def test_outside_the_checkout_and_a_bad_mode_are_one_clear_line(tmp_path):
    """Old: both said "killed, crashed, or the folder is full"."""
    env = clean_env(**ROOT_OK)
    away = subprocess.run([sys.executable, "-m", "gpucomm", "nightly", "--out", str(tmp_path / "a")],
                          cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=120)
    assert away.returncode == constants.EXIT_BAD_INPUT, away.stdout
    assert f"gpucomm nightly: error: no checks/ folder in {tmp_path} or above it" in away.stdout
    assert not (tmp_path / "a").exists()
    run = nightly_run(tmp_path, "--mode", "nosuch")
    assert run.returncode == constants.EXIT_REPORT_FAIL, run.stdout[-2000:]
    assert "wrote no report to" in run.stdout and "ERROR: invalid mode: 'nosuch'" in run.stdout.splitlines()[-1]
    assert not (tmp_path / "night").exists()  # the run's empty folder is not left behind


def test_nights_in_a_row_build_a_history_and_the_last_is_judged_against_it(tmp_path):
    """Old: every night said "N nights before a software change left out of its history" (the
    per-run GPUCOMM_WATCH_PID of a local job read as a software change) and judged nothing.  Six
    nights of `gpucomm nightly` as cron runs them (the earlier nights' folders next to --out): the
    sixth judges its variables against the five before, and no night reads a software change."""
    from gpucomm.analysis.drift import MIN_NIGHTS
    outs = []
    for i in range(MIN_NIGHTS + 1):
        run = subprocess.run([sys.executable, "-m", "gpucomm", "nightly", "--out", str(tmp_path / f"n{i}"),
                              "--night-gap", "0", "-n", "^HealthCheck%operation=pingpong", "-S", "sizes=8,1M",
                              "--prefix", str(tmp_path / "prefix")],
                             cwd=REPO, env=clean_env(**ROOT_OK), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, timeout=600)
        assert run.returncode in (constants.EXIT_OK, constants.EXIT_RETEST), run.stdout[-3000:]
        assert "software change" not in run.stdout, run.stdout[-3000:]
        outs.append(run.stdout)
    (line,) = [ln for ln in outs[-1].splitlines() if ln.startswith("nightly drift: ") and " judged against" in ln]
    judged, of = (int(w) for w in line.split(" judged against")[0].split(", ")[-1].split(" of "))
    # the history is there: every variable judged, or "blind" (on a loaded machine a host variable
    # too noisy to see 50 % is judged by its references only, and says so), none still "new"
    assert of > 0 and "more needed" not in outs[-1], outs[-1][-2000:]
    assert judged >= 1 or "too noisy to see a node" in outs[-1], outs[-1][-2000:]
    assert "have 4 healthy nights of history" in outs[-2] or "1 more needed" in outs[-2], outs[-2][-2000:]


@pytest.mark.parametrize("gap", ["1e308", "1e6"])
def test_a_night_gap_beyond_a_year_is_refused_before_reframe_runs(tmp_path, gap):
    """Old: `--night-gap 1e308` ran the whole night, then "internal error: KeyError: np.int64(-1)"."""
    run = nightly_run(tmp_path, "--night-gap", gap, "-n", "^HealthCheck")
    assert run.returncode == constants.EXIT_BAD_INPUT, run.stdout[-2000:]
    assert run.stdout.strip() == (f"gpucomm nightly: error: --night-gap {float(gap)}: must be at most "
                                  f"{constants.NIGHT_GAP_MAX_H} hours (a year)")
    assert not (tmp_path / "night").exists()


def test_a_foreign_report_folder_is_refused_before_reframe_runs(tmp_path):
    """Old: DIR/report/ holding the user's files failed only after the night had run."""
    mine = tmp_path / "night" / "report" / "notes.txt"
    mine.parent.mkdir(parents=True)
    mine.write_text("mine")
    run = nightly_run(tmp_path, "-n", "^HealthCheck")
    assert run.returncode == constants.EXIT_BAD_INPUT, run.stdout[-2000:]
    assert run.stdout.strip() == (f"gpucomm nightly: error: {tmp_path / 'night' / 'report'} holds files that "
                                  "gpucomm report did not write (no .gpucomm-report): give a new or empty folder")
    assert mine.read_text() == "mine" and not (tmp_path / "night" / "report.json").exists()


@pytest.mark.parametrize("given", [["--checkpath=checks/health.py"], ["-cchecks/health.py"], ["-c", "checks/health.py"],
                                   ["--checkpath", "checks/health.py"]])
def test_the_users_check_path_in_any_spelling_replaces_the_repositorys(given, monkeypatch):
    """Old: `--checkpath=checks/health.py` (or -cFILE) added the repository's own `-c checks` to
    the user's: 5 checks instead of 3."""
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("RFM_CONFIG_FILES", raising=False)
    monkeypatch.delenv("RFM_CHECK_SEARCH_PATH", raising=False)
    cmd = nightly.reframe_command("health", "R", given)
    assert str(REPO / "checks") not in cmd and cmd[-len(given):] == given
    assert cmd[cmd.index("-C") + 1] == str(REPO / "config" / "settings.py")


@pytest.mark.parametrize("given", [["--config-file=X"], ["-CX"], ["-C", "X"]])
def test_the_users_config_in_any_spelling_replaces_the_repositorys(given, monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("RFM_CONFIG_FILES", raising=False)
    monkeypatch.delenv("RFM_CONFIG_PATH", raising=False)
    cmd = nightly.reframe_command("health", "R", given)
    assert "-C" not in cmd[:-len(given)] and str(REPO / "checks") in cmd


def test_what_reframe_said_is_the_fail_line(tmp_path):
    """Old: "(killed, crashed, or the folder is full)" after reframe's argparse error, and a
    quoted "ERROR: Traceback (most recent call last):" for ReFrame's own traceback."""
    run = nightly_run(tmp_path, "--nosuchopt")
    assert run.returncode == constants.EXIT_BAD_INPUT, run.stdout[-2000:]
    assert run.stdout.splitlines()[-1] == ("gpucomm nightly: FAIL: reframe refused its command line (exit 2): "
                                           "reframe: error: unrecognized arguments: --nosuchopt")
    run = nightly_run(tmp_path, "-n", "^HealthCheck", "-S", "time_limit=abc")
    assert run.returncode == constants.EXIT_BAD_INPUT, run.stdout[-2000:]
    assert run.stdout.splitlines()[-1] == ("gpucomm nightly: FAIL: reframe refused its command line (exit 2): "
                                           "gpucomm: error: -S time_limit='abc': invalid duration: abc")


def test_a_traceback_is_quoted_by_its_exception():
    said = ["[ERROR] ...", "ERROR: Traceback (most recent call last):", '  File "x.py", line 1, in <module>',
            "    raise ValueError('invalid duration: abc')", "ValueError: invalid duration: abc", "Log file(s) saved"]
    run, traceback = procs.ReframeRun([]), False
    for line in said:
        traceback = run._keep_error(line, traceback)
    assert run.errors == ["ERROR: ValueError: invalid duration: abc"]


def test_an_out_that_is_a_dangling_link_is_one_line(tmp_path):
    """Old: "cannot make DIR: File exists"."""
    (tmp_path / "night").symlink_to(tmp_path / "gone")
    run = nightly_run(tmp_path, "-n", "^HealthCheck")
    assert run.returncode == constants.EXIT_BAD_INPUT, run.stdout[-2000:]
    assert run.stdout.strip() == (f"gpucomm nightly: error: --out {tmp_path / 'night'} is a symbolic link to "
                                  f"{tmp_path / 'gone'}, which does not exist: give a folder")


def test_an_empty_mode_is_refused(tmp_path):
    """Old: `--mode ''` ran ReFrame without a mode (its default set), saying nothing (a ReFrame quirk)."""
    run = nightly_run(tmp_path, "--mode", "")
    assert run.returncode == constants.EXIT_BAD_INPUT, run.stdout[-2000:]
    assert run.stdout.strip() == "gpucomm nightly: error: --mode '': give a mode (health, acceptance, paper, ...)"
    assert not (tmp_path / "night").exists()
