"""What a distributed run (``--distribute``: the acceptance modes) will ask for, said before anything
is submitted, and refused where a job is over its partition's documented limits.

Every test case of ``--distribute`` (and ``--repeat``) is counted as ReFrame instantiates it
(``tally``, at init: all of a session's test cases exist before the first is set up); at the first
set-up of one of them, before any job is submitted (``plan_before_submitting``), one line per
partition says the jobs, the node-hours at the jobs' time limits and the reservation's wall time at
the partition's ``max_jobs`` (every job at its time limit, max_jobs at once).  A job longer than the
partition's longest (extras['max_time']) or larger than its largest (extras['max_nodes']) stops the
session there: one line naming the limit (ReFrame's "run session stopped: refused before submitting:
..."), ReFrame's exit 1, nothing submitted (ForceExitError: ReFrame aborts every test case).
"""

import re

from reframe.core.exceptions import ForceExitError

from ..constants import Extras

#: (partition, check, params, node) -> {"repeats": set, "time_s": float or None, "nodes": int}
_CASES: dict[tuple, dict] = {}
#: partitions already planned in this ReFrame process
_PLANNED: set[str] = set()
_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_time(value):
    """Seconds of a ReFrame time limit ('10m', '1h30m', '90s', '0:10:0', a number), or None."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip()
    if ":" in text:
        parts = [float(p) for p in text.split(":")]
        return sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
    found = re.findall(r"(\d+(?:\.\d+)?)([dhms])", text)
    if found and "".join(n + u for n, u in found) == text:
        return sum(float(n) * _UNITS[u] for n, u in found)
    try:
        return float(text)
    except ValueError:
        return None


def hours(seconds):
    """'2 h 05 min' / '45 min' of a number of seconds."""
    m = int(round(seconds / 60))
    return f"{m // 60} h {m % 60:02d} min" if m >= 60 else f"{m} min"


def tally(partition, check, params, node, repeat, time_s, nodes):
    """Count one test case of a distributed session (its repeat number or None)."""
    entry = _CASES.setdefault((partition, check, params, node), {"repeats": set(), "time_s": time_s, "nodes": nodes})
    entry["repeats"].add(repeat)


def plan(partition, max_jobs, time_s=None):
    """(jobs, node-hours, wall seconds, longest job s, largest job nodes) of ``partition``'s counted
    test cases; a job whose time limit was unknown at init (None) counts at ``time_s``."""
    jobs = job_s = node_s = 0.0
    longest, largest = 0.0, 0
    for (part, *_), e in _CASES.items():
        if part != partition:
            continue
        n = len(e["repeats"] - {None}) or 1
        t = e["time_s"] if e["time_s"] is not None else (time_s or 0.0)
        jobs += n
        job_s += n * t
        node_s += n * t * e["nodes"]
        longest, largest = max(longest, t), max(largest, e["nodes"])
    wall = job_s / max(1, max_jobs or 1)
    return int(jobs), node_s / 3600, wall, longest, largest


def over_limits(partition, extras, longest, largest, what):
    """The line that refuses a session whose jobs are over ``partition``'s documented limits, or None."""
    cap_s = parse_time(extras.get(Extras.MAX_TIME))
    if cap_s and longest > cap_s:
        return (f"refused before submitting: {what}'s time limit {hours(longest)} is over {partition}'s longest job, "
                f"{hours(cap_s)} (extras['max_time'], config/systems/): give -S {what}.time_limit=... "
                f"(or fewer checks: -S {what}.checks=REGEX)")
    cap_n = extras.get(Extras.MAX_NODES)
    if cap_n and largest > cap_n:
        return (f"refused before submitting: a job of {largest} nodes is over {partition}'s largest job, {cap_n} "
                "nodes (extras['max_nodes'], config/systems/)")
    return None


def plan_line(partition, max_jobs, jobs, node_h, wall_s, longest):
    """The plan of one partition in words."""
    return (f"acceptance plan for {partition}: {jobs:,} job(s), {node_h:,.0f} node-hours at their time limits "
            f"(longest {hours(longest)}); the reservation held about {hours(wall_s)} at max_jobs {max_jobs} "
            "(every job at its time limit)")


def plan_before_submitting(test, what):
    """At the first set-up of a distributed test case of its partition: log the plan; raise
    ForceExitError (one line naming the limit) where a job is over the partition's limits."""
    from reframe.core.logging import getlogger
    part = test.current_partition
    if part is None or part.fullname in _PLANNED or getattr(test, ".nid", None) is None:
        return
    _PLANNED.add(part.fullname)
    max_jobs = getattr(part, "max_jobs", 1)
    jobs, node_h, wall, longest, largest = plan(part.fullname, max_jobs, parse_time(test.time_limit))
    getlogger().info(plan_line(part.fullname, max_jobs, jobs, node_h, wall, longest))
    refused = over_limits(part.fullname, part.extras, longest, largest, what)
    if refused:  # ReFrame aborts every test case on this one and exits non-zero: nothing is submitted
        raise ForceExitError(refused)
