"""The exact ReFrame command that retests a suspect node (``gpucomm acceptance``'s suspects.csv):
the session's own command line, its scope kept (``-J reservation=``, its --distribute state), its
selection, repeats and node options replaced."""

from __future__ import annotations

import json
import shlex

import pandas as pd

#: the repeats a suspect's retest asks for
RETEST_REPEATS = 5

#: options of the session's command line a retest replaces (with their value)
_DROP_WITH_VALUE = {"-n", "--name", "--repeat", "--distribute", "--report-file", "-x", "--exclude-names",
                    "-E", "--filter-expr"}
#: job options (-J) that name nodes: the retest names its own node instead
_NODE_JOB_OPTIONS = {"nodelist", "w", "exclude", "x"}


def session_cmdlines(cases: pd.DataFrame) -> list[str]:
    """The ReFrame command lines of the sessions (from their reports, through the reader's sessions;
    here: the cases' sources' session_info)."""
    found = []
    for src in cases["source"].dropna().unique():
        try:
            with open(src) as fp:
                found.append(str(json.load(fp).get("session_info", {}).get("cmdline") or ""))
        except (OSError, ValueError, AttributeError):
            continue
    return [c for c in found if c]


def name_filter(check: str) -> str:
    """ReFrame's ``-n`` pattern of exactly one check as the report names it ("PingPongCheck
    %method=host" -> "^PingPongCheck%method=host": its own syntax for parameters, a space in the
    pattern matches nothing; "NodeStateCheck" -> "^NodeStateCheck$")."""
    name, *params = check.split()
    if not params:
        return f"^{name}$"
    return f"^{name}" + "".join(p if p.startswith("%") else f"%{p}" for p in params)


def _job_option_names_node(value: str) -> bool:
    """Whether a -J value ("reservation=x", "--nodelist=n1", "-w n1") names nodes."""
    word = value.strip().lstrip("-").split("=", 1)[0].split()[0] if value.strip() else ""
    return word in _NODE_JOB_OPTIONS


def _kept_words(words: list[str]) -> tuple[list[str], str]:
    """(the session's words a retest keeps: its scope, system, configuration; its --distribute
    state, 'all' where it gave none)."""
    keep, state, i = [], "all", 0
    while i < len(words):
        w = words[i]
        opt, eq, val = w.partition("=")
        takes = opt in _DROP_WITH_VALUE | {"-J", "--job-option"} and not eq
        value = val if eq else (words[i + 1] if takes and i + 1 < len(words) else "")
        if opt == "--distribute":
            nxt = words[i + 1] if not eq and i + 1 < len(words) else ""
            state = val if eq else (nxt if nxt and not nxt.startswith("-") else "all")
            i += 1 + (0 if eq or not nxt or nxt.startswith("-") else 1)
            continue
        if opt in ("-J", "--job-option") or (w.startswith("-J") and len(w) > 2):
            jv = value if opt in ("-J", "--job-option") else w[2:]
            if not _job_option_names_node(jv):
                keep += ["-J", jv]
            i += 2 if takes else 1
            continue
        if opt in _DROP_WITH_VALUE or w in ("-r", "--run"):
            i += 2 if takes else 1
            continue
        keep.append(w)
        i += 1
    return keep, state


def retest_command(cmdlines: list[str], node: str, checks: list[str], part: str) -> str:
    """The exact ReFrame command that retests ``node`` on ``checks`` (none: every check) with
    RETEST_REPEATS repeats: the session's own command line, its scope kept (``-J reservation=``,
    its --distribute state), its selection, repeats and node options replaced."""
    try:
        words = shlex.split(cmdlines[0]) if cmdlines else []
    except ValueError:
        words = []
    keep, state = _kept_words(words[1:])
    # a node-job session (--mode acceptance-node) is retested check by check: step 1's mode
    keep = [{"acceptance-node": "acceptance", "--mode=acceptance-node": "--mode=acceptance"}.get(w, w) for w in keep]
    if not any(w.startswith("--system") for w in keep) and part:
        keep += ["--system", part]
    if not any(w in ("-c", "--checkpath") or w.startswith(("--checkpath=", "-c")) for w in keep):
        keep = ["-c", "checks/"] + keep
    sel = []
    for c in checks:
        sel += ["-n", name_filter(c)]
    return shlex.join(["reframe", *keep, *sel, f"--distribute={state}", "-J", f"nodelist={node}",
                       f"--repeat={RETEST_REPEATS}", "-r"])
