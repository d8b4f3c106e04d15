"""Processes by pid and start time, and the supervision of a reframe run: what the payload's
watchdog, the checks' watched local jobs (rfm.watch) and ``gpucomm nightly`` share (Linux /proc).

A pid alone may be another process's by then: a process is its pid and its start time
(process_token).  ReframeRun runs reframe in a session of its own and passes a stop signal on
(analysis/nightly.py's docstring says how a night ends).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from types import FrameType

from .constants import NIGHTLY_ORPHAN_GRACE_S, NIGHTLY_STOP_GRACE_S

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _start_time(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks since boot, /proc/PID/stat field 22), or
    None where it does not run (gone, or a zombie: killed, not yet reaped by its parent)."""
    try:
        with open(f"/proc/{pid}/stat") as fp:
            fields = fp.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if len(fields) < 20 or fields[0] in ("Z", "X") else fields[19]


def process_token(pid: int) -> str:
    """"PID:START" of a running process (what WATCH_PID_ENV holds)."""
    return f"{pid}:{_start_time(pid) or ''}"


def process_alive(token: object) -> bool:
    """Whether the process of ``token`` (process_token) still runs; True for a token that says
    nothing (no pid): no process to outlive."""
    pid, _, start = str(token).partition(":")
    if not pid.isdigit():
        return True
    now = _start_time(int(pid))
    return now is not None and (not start or now == start)



class Stopped(BaseException):
    """A stop signal before reframe started or after it ended (while the report is written):
    not an Exception, which the report's own catch-all would take for its bug."""


def process_table():
    """{pid: (parent pid, start time)} of every live process (Linux /proc; zombies left out)."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fp:
                fields = fp.read().rpartition(")")[2].split()
        except OSError:
            continue
        if fields and fields[0] != "Z":
            table[int(name)] = (int(fields[1]), fields[19])
    return table


def descendants(pid: int) -> dict[int, str]:
    """{pid: start time} of every process under ``pid`` (the start time tells a reused pid)."""
    table = process_table()
    children: dict[int, list[int]] = {}
    for child, (parent, _) in table.items():
        children.setdefault(parent, []).append(child)
    found, todo = {}, [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found[child] = table[child][1]
                todo.append(child)
    return found


def still_running(procs: dict[int, str]) -> dict[int, str]:
    """The processes of ``procs`` ({pid: start time}) that still run, as {pid: start time}."""
    table = process_table()
    return {pid: t for pid, t in procs.items() if pid in table and table[pid][1] == t}


def kill_all(procs, sig=signal.SIGKILL):
    """Send ``sig`` to every pid of ``procs`` (one gone already: nothing)."""
    for pid in procs:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


#: prctl(2)'s option: the signal a process gets when the thread that started it ends
PR_SET_PDEATHSIG = 1


def dies_with(parent):
    """reframe's preexec_fn: SIGTERM to it when ``parent`` (this process) ends, however it ends
    (SIGKILL: cron's ``timeout -s KILL``, the OOM killer), as a stop signal would be passed on;
    reframe then cancels its jobs and writes its report, and its local jobs' ranks end with it
    (rfm.watch).  Linux only (elsewhere nothing: the stop signals are still passed on)."""
    def arm():
        try:
            import ctypes
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        except (OSError, AttributeError):
            return
        if os.getppid() != parent:  # the parent died before the prctl: nothing would tell
            os.kill(os.getpid(), signal.SIGTERM)
    return arm


class ReframeRun:
    """reframe in a session of its own, its output passed through (its ERROR lines kept), and a
    stop signal to this process passed to it (see the module's docstring); ``killed`` counts
    the processes under it that had to be killed."""

    def __init__(self, cmd):
        self.cmd, self.signal, self.errors, self.killed = cmd, None, [], 0
        self.proc, self.under, self.deadline = None, {}, None

    def stop(self, signum: int, _frame: FrameType | None = None) -> None:
        if self.proc is None or self.proc.poll() is not None:  # reframe has ended: stop the report
            raise Stopped(signum)
        self.signal = self.signal or signum
        self.under.update(descendants(self.proc.pid))
        if self.deadline is None:
            self.deadline = time.monotonic() + NIGHTLY_STOP_GRACE_S
            self.proc.send_signal(signal.SIGINT if signum == signal.SIGINT else signal.SIGTERM)

    def _copy(self, src, dst):
        traceback = False
        for raw in iter(src.readline, b""):
            text = _ANSI.sub("", raw.decode(errors="replace")).rstrip()
            traceback = self._keep_error(text, traceback)
            try:
                dst.buffer.write(raw)
                dst.flush()
            except (OSError, ValueError):  # our output is gone: keep reading reframe's
                pass

    def _keep_error(self, text: str, traceback: bool) -> bool:
        """Keep what reframe said was wrong: its ERROR lines, argparse's "reframe: error:" line,
        and of a traceback its exception's line (ReFrame's "ERROR: Traceback (most recent call
        last):" says nothing); whether a traceback's frames follow."""
        line = text.strip()
        if line.endswith("Traceback (most recent call last):"):
            return True
        if traceback:
            if not line or text[:1].isspace():
                return True
            self.errors.append(f"ERROR: {line}")
            return False
        if line.startswith(("ERROR:", "reframe: error:", "gpucomm: error:")):
            self.errors.append(line)
        return False

    def run(self) -> int:
        """reframe's exit status (negative: the signal that ended it)."""
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     start_new_session=True, preexec_fn=dies_with(os.getpid()))
        copiers = [threading.Thread(target=self._copy, args=pair, daemon=True)
                   for pair in ((self.proc.stdout, sys.stdout), (self.proc.stderr, sys.stderr))]
        for thread in copiers:
            thread.start()
        while True:
            try:
                rc = self.proc.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                pass
            if self.deadline is not None:
                self.under.update(descendants(self.proc.pid))
                if time.monotonic() > self.deadline:
                    left = still_running(self.under)
                    kill_all(left)
                    self.killed += len(left)
                    try:
                        os.killpg(self.proc.pid, signal.SIGKILL)
                    except OSError:
                        pass
        if self.signal is not None:
            self.killed += self._end_what_is_left()
        for thread in copiers:
            thread.join(timeout=5)
        return rc

    def _end_what_is_left(self):
        """The processes that were under reframe and outlived it, ended: how many had to be killed."""
        deadline = time.monotonic() + NIGHTLY_ORPHAN_GRACE_S
        left = still_running(self.under)
        while left and time.monotonic() < deadline:
            time.sleep(0.2)
            left = still_running(left)
        kill_all(left)
        return len(left)
